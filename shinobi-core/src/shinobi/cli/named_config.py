"""The warning of a ``SHINOBI_CONFIG`` that names no file, for every command that
loads the configuration.

Apart from ``ninja config`` (whose command group costs ``ninja run`` 1.5 ms to
import) so that a run pays only for this function.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["configured_workspace", "warn_if_named_file_missing"]


def warn_if_named_file_missing() -> None:
    """Warn, for a command that loaded the configuration, when ``SHINOBI_CONFIG``
    names no file: a run without the site's settings (its partition, its cache)
    went unremarked by all but ``config show``."""
    from shinobi.config import named_file_missing

    said = named_file_missing()
    if said is None:
        return
    ctx = click.get_current_context(silent=True)
    told = ctx.find_root().meta if ctx is not None else {}
    if told.get(_TOLD):  # a command that reads the configuration twice says it once
        return
    told[_TOLD] = True
    click.echo(f"ninja: warning: {said}", err=True)


_TOLD = "shinobi.named_config.told"


def configured_workspace(workdir: Path | None) -> Path:
    """The workspace a command looks in (``--workdir``, else ``execution.workdir``,
    else the current directory), warning as above when the configuration was read
    for it: ``ninja runs`` without the site's workdir lists another folder's runs."""
    from shinobi.launch.find import workspace

    found = workspace(workdir)
    if workdir is None:
        warn_if_named_file_missing()
    return found
