"""``ninja cache ls|rm|prune``: look after the step cache.

The cache lives in ``cache.dir`` (default: the user cache directory); every
command takes ``--cache-dir`` to point at another one, such as a cache shared
with a cluster.
"""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from shinobi.cache import CacheEntry, StepCache

__all__ = ["group", "parse_age"]

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "": 86400}

cache_dir_option = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The cache to work on (default: config cache.dir).",
)


def parse_age(text: str) -> float:
    """Seconds in ``30d``, ``12h``, ``90m``, ``45s``, ``2w`` (a bare number is days)."""
    match = _AGE.match(text)
    if not match:
        from shinobi.errors import UsageError

        raise UsageError(f"--older-than {text!r}: write an age like 30d, 12h, 90m or 2w")
    number, unit = match.groups()
    return float(number) * _SECONDS[unit]


def _open(cache_dir: Path | None) -> StepCache:
    from shinobi.cache import StepCache
    from shinobi.config import load_config
    from shinobi.errors import UsageError

    if cache_dir is not None and not cache_dir.is_dir():  # a typo, not an empty cache
        raise UsageError(f"there is no step cache at {cache_dir}; check the --cache-dir path")
    return StepCache(cache_dir or load_config().cache_dir())


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "?"


def _as_json(entry: CacheEntry, stale: bool | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "key": entry.key,
        "step": entry.step,
        "tool": entry.tool,
        "created": entry.created,
        "run_id": entry.run_id,
        "host": entry.host,
        "cwd": entry.cwd,
        "outputs": [rel for rel, _ in entry.files],
        "bytes": entry.size,
    }
    if stale is not None:
        data["stale"] = stale
    return data


@click.group(short_help="List, remove or prune step-cache entries.")
def group() -> None:
    """Inspect and clean the step cache.

    A step whose tool, arguments, input contents, image and backend are all
    unchanged is not run again: its recorded result is reused, provided the
    outputs it left are still there unchanged. `ninja run --no-cache` runs
    every step regardless.
    """


@group.command("ls")
@cache_dir_option
@click.option("--stale", "check", is_flag=True, help="Also say which entries can no longer hit.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
def ls(cache_dir: Path | None, check: bool, as_json: bool) -> None:
    """List cached step results, newest first."""
    cache = _open(cache_dir)
    entries = sorted(cache.entries(), key=lambda e: e.created, reverse=True)
    stale = {e.key: cache.is_stale(e) for e in entries} if check else {}
    if as_json:
        rows = [_as_json(e, stale.get(e.key) if check else None) for e in entries]
        click.echo(json.dumps({"cache_dir": str(cache.root), "entries": rows}, indent=2))
        return
    if not entries:
        click.echo(f"the step cache in {cache.root} is empty")
        return
    for entry in entries:
        mark = ("  STALE" if stale.get(entry.key) else "  ok") if check else ""
        click.echo(
            f"{entry.key[:12]}  {_when(entry.created)}  {entry.step:<24} {entry.tool:<16}"
            f" {entry.host}{mark}"
        )
    click.echo(f"{len(entries)} entries in {cache.root}")


def _matching(cache: StepCache, keys: tuple[str, ...], step: str | None) -> list[CacheEntry]:
    from shinobi.errors import UsageError

    entries = list(cache.entries())
    if step is not None:
        found = [e for e in entries if e.step == step]
        if not found:
            from shinobi.errors import did_you_mean

            steps = sorted({e.step for e in entries})
            raise UsageError(
                f"no cache entry is for a step {step!r}{did_you_mean(step, steps)}"
                " (`ninja cache ls` lists them)"
            )
        return found
    chosen: list[CacheEntry] = []
    for key in keys:
        if not key:
            raise UsageError("an empty key names every entry; give one from `ninja cache ls`")
        found = [e for e in entries if e.key.startswith(key)]
        if not found:
            raise UsageError(f"no cache entry starts with {key!r}; `ninja cache ls` lists them")
        if len(found) > 1:
            raise UsageError(
                f"{key!r} matches {len(found)} cache entries; give more of the key"
                " (`ninja cache ls` shows them)"
            )
        chosen.extend(found)
    return chosen


@group.command("rm")
@cache_dir_option
@click.argument("keys", nargs=-1)
@click.option("--step", help="Remove every entry recorded for the step of this name.")
@click.option("--all", "everything", is_flag=True, help="Remove every entry.")
def rm(cache_dir: Path | None, keys: tuple[str, ...], step: str | None, everything: bool) -> None:
    """Remove cache entries by KEY (a prefix is enough), by --step, or --all."""
    from shinobi.errors import UsageError

    named = sum(x is not None and x != () and x is not False for x in (keys, step, everything))
    if named == 0:
        raise UsageError("name what to remove: KEY..., --step NAME or --all")
    if named > 1:
        raise UsageError("KEY..., --step and --all each say what to remove: give only one")
    cache = _open(cache_dir)
    entries = list(cache.entries()) if everything else _matching(cache, keys, step)
    for entry in entries:
        cache.remove(entry)
    click.echo(f"removed {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}")


@group.command("prune")
@cache_dir_option
@click.option("--older-than", "older_than", help="Also remove entries older than this (30d, 12h).")
@click.option(
    "--all-hosts", is_flag=True, help="Check entries made on other hosts too (shared cache)."
)
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
def prune(
    cache_dir: Path | None,
    older_than: str | None,
    all_hosts: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Remove entries that can never hit again (their outputs are gone or changed).

    Only entries made on this host are checked unless --all-hosts is given: in
    a cache shared with a cluster, another host's outputs are usually not
    visible here, and would look gone.
    """
    from shinobi.errors import UsageError

    cache = _open(cache_dir)
    cutoff = time.time() - parse_age(older_than) if older_than else None
    host = socket.gethostname()
    doomed: list[tuple[CacheEntry, str]] = []
    try:
        for entry in cache.entries():
            if cutoff is not None and entry.created < cutoff:
                doomed.append((entry, "old"))
            elif (all_hosts or entry.host == host) and cache.is_stale(entry):
                doomed.append((entry, "outputs gone or changed"))
        leftovers = cache.leftovers()
        if not dry_run:
            for entry, _ in doomed:
                cache.remove(entry)
            for path in leftovers:
                path.unlink(missing_ok=True)
            cache.memo.prune()  # digests remembered for files that are gone
    except OSError as exc:  # not a cache directory, or one this user cannot change
        raise UsageError(f"cannot prune the cache at {cache.root}: {exc}") from None
    verb = "would remove" if dry_run else "removed"
    if as_json:
        rows = [{**_as_json(e), "reason": why} for e, why in doomed]
        click.echo(json.dumps({"dry_run": dry_run, "entries": rows}, indent=2))
        return
    for entry, why in doomed:
        click.echo(f"{verb} {entry.key[:12]}  {entry.step}  ({why})")
    click.echo(
        f"{verb} {len(doomed)} entr{'y' if len(doomed) == 1 else 'ies'}"
        + (f" and {len(leftovers)} unfinished write(s)" if leftovers else "")
    )
