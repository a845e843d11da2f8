"""``ninja backends`` and ``ninja doctor``: what is installed, and what works here."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

import click

__all__ = ["command", "doctor"]


def _rows(group: str, probe: bool) -> list[dict[str, object]]:
    """One row per backend (or engine, launcher). What a plugin prints while it is
    imported or probed goes to stderr: stdout is the table, or ``--json``'s JSON."""
    with contextlib.redirect_stdout(sys.stderr):
        return _probed_rows(group, probe)


def _probed_rows(group: str, probe: bool) -> list[dict[str, object]]:
    from shinobi.backends.registry import BACKENDS, KNOWN_PROVIDERS, PLANNED, describe

    rows: list[dict[str, object]] = []
    installed = describe(group)
    for info in installed:
        row: dict[str, object] = {
            "name": info.name,
            "distribution": info.distribution,
            "loads": info.error is None,
        }
        if info.error is not None:
            row["usable"] = False
            fix = f"; {info.fix}" if info.fix else ""
            row["detail"] = f"failed to load: {info.error}{fix}"
        elif probe and group == BACKENDS:
            row["usable"], row["detail"] = _probe(info.name)
        else:
            row["usable"], row["detail"] = _listed(group, info.name)
        if info.note is not None:
            row["detail"] = f"{row['detail']} ({info.note})"
        rows.append(row)
    names = {info.name for info in installed}
    for name, dist in KNOWN_PROVIDERS.get(group, {}).items():
        if name not in names:
            rows.append(
                {
                    "name": name,
                    "distribution": dist,
                    "loads": False,
                    "usable": False,
                    "detail": f"planned: {dist} is not implemented yet"
                    if dist in PLANNED
                    else f"not installed: pip install ./{dist} (from a shinobi checkout)",
                }
            )
    return rows


def _probe(name: str) -> tuple[bool, str]:
    """Whether the backend ``name`` can run here, and why: made as a run would make
    it, its settings checked as a run would refuse them, then its own check().
    What the plugin's code raises is a row naming the plugin, not doctor's end."""
    from shinobi.backends import get_backend
    from shinobi.backends.registry import BACKENDS, plugin_code
    from shinobi.errors import ShinobiError

    try:
        backend = get_backend(name)
        with plugin_code(BACKENDS, name, "check_settings()"):
            backend.check_settings(backend.settings)
        with plugin_code(BACKENDS, name, "check()"):
            status = backend.check()
            return status.usable, status.detail
    except ShinobiError as exc:  # e.g. its configuration table is wrong
        return False, _where(exc)


def _listed(group: str, name: str) -> tuple[bool | None, str]:
    """An entry point that loads, listed without probing: "installed" when it names
    the kind of class its group takes. A class that is no OffloadTarget was listed
    so, and only ``ninja compile`` refused it. The launchers group has no
    interface yet (nothing loads it), so whatever is there is "installed"."""
    from shinobi.backends.registry import load_plugin, plugin_class
    from shinobi.errors import BackendNotFound

    base = _plugin_base(group)
    if base is None:
        load_plugin(group, name)
        return None, "installed"
    try:
        plugin_class(group, name, base)
    except BackendNotFound as exc:
        return False, str(exc)
    return None, "installed"


def _plugin_base(group: str) -> type | None:
    """The class a plugin of ``group`` subclasses (None: the group has no interface yet)."""
    from shinobi.backends.registry import BACKENDS, OFFLOAD

    if group == BACKENDS:
        from shinobi.backends.base import Backend

        return Backend
    if group == OFFLOAD:
        from shinobi.offload.base import OffloadTarget

        return OffloadTarget
    return None


def _where(exc: Exception) -> str:
    """A refusal's line, with the file or variable that set the value it is about."""
    from shinobi.config import said_where
    from shinobi.errors import ConfigError

    return said_where(str(exc)) if isinstance(exc, ConfigError) else str(exc)


def _print(title: str, rows: list[dict[str, object]]) -> None:
    click.echo(title)
    for row in rows:
        usable = row["usable"]
        mark = "ok" if usable else ("--" if usable is None else "no")
        click.echo(f"  {mark:<3} {row['name']:<12} {row['distribution']:<20} {row['detail']}")


@click.command(short_help="List installed backends and whether each is usable here.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@click.option("--no-check", is_flag=True, help="List entry points without probing engines.")
def command(as_json: bool, no_check: bool) -> None:
    """List every backend entry point, the distribution providing it, and
    whether its engine is usable on this host (each plugin's own check)."""
    from shinobi.backends.registry import BACKENDS

    rows = _rows(BACKENDS, probe=not no_check)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        _print("backends:", rows)


def _table_problems(config: Any, report: dict[str, list[dict[str, object]]]) -> list[str]:
    """A ``[backend.NAME]`` key no installed plugin of that name reads: the run or
    compile that loads the plugin would refuse it, so doctor says so first.

    The backend and the offload engine of one name share the table, so a key
    either of them reads is fine.
    """
    from shinobi.backends.registry import BACKENDS, OFFLOAD, load_plugin
    from shinobi.errors import ConfigError

    readers: dict[str, set[str] | None] = {}
    for group, rows in ((BACKENDS, report["backends"]), (OFFLOAD, report["offload"])):
        for row in rows:
            name = str(row["name"])
            if not row["loads"] or (name in readers and readers[name] is None):
                continue
            keys = getattr(load_plugin(group, name), "settings_keys", None)
            known = readers.setdefault(name, set())
            if keys is None:  # a plugin that does not say what it reads: nothing checked
                readers[name] = None
            elif known is not None:
                known.update(keys)
    problems = []
    for name, keys in readers.items():
        try:
            config.check_backend_table(name, keys)
        except ConfigError as exc:
            problems.append(str(exc))
    return problems + _value_problems(config, report["backends"])


def _unclaimed_tables(config: Any, report: dict[str, list[dict[str, object]]]) -> list[str]:
    """``[backend.NAME]`` tables no installed plugin is named for: a plugin of a
    config file shared by several environments, not installed in this one (a
    run is refused only when a step names it), or a name no plugin has."""
    from shinobi.backends.registry import BACKENDS, KNOWN_PROVIDERS

    installed = {str(row["name"]) for rows in report.values() for row in rows}
    extra = config.backend.model_extra or {}
    unclaimed = [
        key
        for key, value in extra.items()
        if isinstance(value, dict) and key not in installed and key not in KNOWN_PROVIDERS[BACKENDS]
    ]
    return [
        f"[backend.{key}] configures no installed backend: install the plugin that provides"
        f" {key!r} here, or remove the table"
        for key in sorted(unclaimed)
    ]


def _value_problems(config: Any, rows: list[dict[str, object]]) -> list[str]:
    """A backend's value its backend would refuse (``poll_max = "fast"``), asked of
    each installed backend (``Backend.check_settings``): its engine's check passed
    it, and the next run on it was refused."""
    from shinobi.backends.registry import BACKENDS, load_plugin, plugin_code
    from shinobi.errors import ShinobiError

    problems = []
    for row in rows:
        if not row["loads"]:
            continue
        name = str(row["name"])
        check = getattr(load_plugin(BACKENDS, name), "check_settings", None)
        if check is None:
            continue
        try:
            with plugin_code(BACKENDS, name, "check_settings()"):
                check(config.backend_settings(name))
        except ShinobiError as exc:  # a plugin's check must not take doctor down either
            problems.append(_where(exc))
    return problems


def _default_problems(default: str, rows: list[dict[str, object]], said: list[str]) -> list[str]:
    """``backend.default`` when it cannot run a step here: not installed, failing to
    load, or refused by its own check (a ``backend.venv`` that does not exist, an
    engine that is not there). Every run that leaves the backend to it is refused.

    A refusal of its table's keys or values is among ``said`` already: not twice.
    """
    row = next((r for r in rows if r["name"] == default), None)
    if row is not None and row["loads"] and (row["usable"] or row["detail"] in said):
        return []
    detail = row["detail"] if row is not None else "no such backend"
    return [f"backend.default is {default!r}, which cannot be used: {detail}"]


def _cache_dir_warnings(config: Any) -> list[str]:
    """``cache.dir`` when a file stands where it or a parent should be a directory,
    by the check ``ninja cache`` refuses it with, or when this user cannot write
    it (see :func:`_unwritable`). Only a warning: a run goes on without its cache
    (and says so), so the configuration still serves a run.

    Then the directories inside it this user writes to: in a cache shared by a
    group, another user's ``entries/`` or ``memo/<host>/`` not group-writable
    keeps this one from storing results, or from remembering what it read,
    though the cache directory itself is writable.
    """
    from shinobi.cli.cache import open_cache
    from shinobi.errors import UsageError

    try:
        cache = open_cache(None, config)
    except UsageError as exc:  # its hint of `ninja cache --cache-dir` is no option here
        said = str(exc).removesuffix(", or give --cache-dir")
        return [f"{said} (until then every run caches nothing)"]
    origin = config.sources.get("cache.dir")
    setting = f"cache.dir (from {origin})" if origin else "cache.dir (SHINOBI_CACHE_DIR)"
    root = str(cache.root)
    blocked = _unwritable(root)
    if blocked is not None:
        return [
            f"the step cache at {root} cannot be written by this user ({blocked} is not"
            f" writable); set {setting} to a writable directory, or fix the permissions of"
            f" {blocked} (until then every run caches nothing)"
        ]
    memo = _unwritable(str(cache.memo.root))
    inside = [
        ("cannot keep results", "steps run again every time", _entries_unwritable(root)),
        (
            "cannot remember the files it has read",
            "every run reads its inputs again",
            [memo] if memo else [],
        ),
    ]
    return [
        _unwritable_inside(root, setting, what, blocked, consequence)
        for what, consequence, blocked in inside
        if blocked
    ]


def _unwritable_inside(
    root: str, setting: str, what: str, blocked: list[str], consequence: str
) -> str:
    """The warning of directories ``blocked`` in the cache at ``root`` this user
    cannot write, which makes the cache fail to do ``what``."""
    are = f" and {len(blocked) - 1} more there are" if len(blocked) > 1 else " is"
    return (
        f"the step cache at {root} {what} ({blocked[0]}{are} not writable by this user);"
        f" fix the permissions of {blocked[0]} (in a cache shared by a group, its owner can"
        f" `chmod -R g+w` it), or set {setting} to a writable directory (until then"
        f" {consequence})"
    )


def _entries_unwritable(root: str) -> list[str]:
    """``entries/`` in the cache at ``root``, or the directories in it (one per
    two first hex digits of a key) that this user cannot write."""
    entries = os.path.join(root, "entries")
    if not os.path.isdir(entries):
        return []
    if not os.access(entries, os.W_OK | os.X_OK):
        return [entries]
    try:
        with os.scandir(entries) as found:
            shards = sorted(e.path for e in found if len(e.name) == 2 and e.is_dir())
    except OSError:  # not to be listed: a run does not list it either
        return []
    return [shard for shard in shards if not os.access(shard, os.W_OK | os.X_OK)]


def _state_dir_warnings() -> list[str]:
    """The folder of ninja's index of launches when this user cannot write it:
    `compile --submit` is then refused (74), and `ninja runs --all` lists nothing.
    A warning: a local run needs no index."""
    from shinobi.errors import ShinobiError
    from shinobi.launch.index import index_path

    try:
        folder = str(index_path().parent)
    except ShinobiError as exc:  # no HOME to put it under
        return [f"{exc} (until then `ninja compile --submit` is refused)"]
    blocked = _unwritable(folder)
    if blocked is None:
        return []
    return [
        f"the index of launches in {folder} cannot be written by this user ({blocked} is not"
        " writable): set XDG_STATE_HOME to a directory of yours (until then `ninja compile"
        " --submit` is refused, and `ninja runs --all` lists nothing)"
    ]


def _unwritable(root: str) -> str | None:
    """The directory that keeps this user from storing results under ``root``:
    ``root`` itself, or the nearest existing parent a run would make it in; None
    when it can be written. By the check a run makes before it caches
    (``os.access``, as in :mod:`shinobi.records`), so doctor says what the run would."""
    path = os.path.abspath(root)
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return None if os.access(path, os.W_OK | os.X_OK) else path


@click.command(short_help="Check this host: backends, offload engines, launchers, config.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def doctor(as_json: bool) -> None:
    """Check everything shinobi can use on this host: backends (probing each
    engine), offload engines, remote launchers, and the configuration."""
    from shinobi.backends.registry import BACKENDS, LAUNCHERS, OFFLOAD
    from shinobi.config import (
        load_config,
        named_file_missing,
        project_config_path,
        user_config_path,
    )

    report = {
        "backends": _rows(BACKENDS, probe=True),
        "offload": _rows(OFFLOAD, probe=False),
        "launchers": _rows(LAUNCHERS, probe=False),
    }
    from shinobi.errors import ConfigError

    config_info: dict[str, object] = {
        "user_file": str(user_config_path()),
        "project_file": str(project_config_path()),
    }
    problems: list[str] = []
    warnings: list[str] = []
    try:
        config = load_config()
    except ConfigError as exc:  # one finding among the others, not the end of the check
        problems.append(str(exc))
    else:
        missing = named_file_missing()  # a site's settings this host goes without
        problems += [missing] if missing else []
        default = config.backend.default
        config_info["default_backend"] = default
        config_info["cache_dir"] = str(config.cache_dir())
        table = _table_problems(config, report)
        problems += _default_problems(default, report["backends"], said=table) + table
        try:
            config.execution.workdir_path()  # what every run, `runs` and `clean` check first
        except ConfigError as exc:
            problems.append(str(exc))
        warnings += _unclaimed_tables(config, report)
        warnings += _cache_dir_warnings(config)
        warnings += _state_dir_warnings()
    config_info["problems"] = problems
    config_info["warnings"] = warnings
    if problems:  # said first: a reader that goes away meanwhile does not undo it
        from shinobi.cli.main import settle_exit_status

        settle_exit_status(2)
    if as_json:
        click.echo(json.dumps({**report, "config": config_info}, indent=2))
    else:
        _print("backends:", report["backends"])
        _print("offload engines (ninja compile --engine):", report["offload"])
        _print("remote launchers (ninja run --remote, planned):", report["launchers"])
        click.echo("configuration:")
        for key, value in config_info.items():
            if key not in ("problems", "warnings"):
                click.echo(f"  {key:<16} {value}")
        for problem in problems:
            click.echo(f"  problem: {problem}")
        for warning in warnings:
            click.echo(f"  warning: {warning}")
    if problems:  # a configuration no run could use
        sys.exit(2)
