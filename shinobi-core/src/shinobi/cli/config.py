"""``ninja config show``: every effective setting and the layer it came from."""

from __future__ import annotations

import json
from typing import Any

import click

from shinobi.cli.named_config import warn_if_named_file_missing

__all__ = ["group"]


@click.group(short_help="Show the effective configuration and where each value came from.")
def group() -> None:
    """Inspect shinobi's configuration.

    \b
    Layers, lowest first: built-in defaults; the user file
    (~/.config/shinobi/config.toml, or $SHINOBI_CONFIG); shinobi.toml in the
    current directory; SHINOBI_<SECTION>_<KEY> environment variables; flags.
    """


@group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print key, value and source as JSON.")
def show(as_json: bool) -> None:
    """Print every setting, its effective value and where it came from."""
    from shinobi.config import load_config

    config = load_config()
    warn_if_named_file_missing()
    rows = [_resolved(config, *row) for row in config.effective()]
    if as_json:
        click.echo(json.dumps([{"key": k, "value": v, "source": s} for k, v, s in rows], indent=2))
        return
    width = max(len(k) for k, _, _ in rows)
    for key, value, source in rows:
        click.echo(f"{key:<{width}}  {_shown(value):<24}  ({source})")


def _shown(value: Any) -> str:
    """``value`` as JSON, with its letters as written (``ü``, not ``\\u00fc``: the
    path an error names is the one shown here), unless the terminal cannot take
    them (a file name of bytes that are no UTF-8)."""
    import sys

    shown = json.dumps(value, ensure_ascii=False)
    if not shown.isascii():
        try:
            shown.encode(sys.stdout.encoding or "utf-8")
        except UnicodeEncodeError:
            return json.dumps(value)
    return shown


def _resolved(config: Any, key: str, value: Any, source: str) -> tuple[str, Any, str]:
    """A row with the value a run will use where the setting leaves it to ninja:
    ``execution.cpus = null`` means "what this process may use", which is a number."""
    if value is not None or source != "default":
        return key, value, source
    if key == "execution.cpus":
        from shinobi.resources import detect_cpus

        return key, detect_cpus(), "detected: the CPUs this process may use"
    if key == "execution.memory":
        from shinobi.resources import detect_memory

        found = detect_memory()
        if found:
            return key, found, "detected: the bytes of memory this process may use"
        return key, None, "not detected: memory limits no step"
    if key == "cache.dir":
        return key, str(config.cache_dir()), "default location"
    return key, value, source


@group.command("path")
def path() -> None:
    """Print the paths of the user and project configuration files."""
    from shinobi.config import project_config_path, user_config_path

    click.echo(f"user:    {user_config_path()}")
    click.echo(f"project: {project_config_path()}")
