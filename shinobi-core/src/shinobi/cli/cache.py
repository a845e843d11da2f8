"""``ninja cache ls|rm|prune``: look after the step cache.

The cache lives in ``cache.dir`` (default: the user cache directory); every
command takes ``--cache-dir`` to point at another one, such as a cache shared
with a cluster.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from shinobi.cli.ages import parse_age
from shinobi.host_name import this_host
from shinobi.wording import counted, listed

if TYPE_CHECKING:
    from shinobi.cache import CacheEntry, StepCache
    from shinobi.config import AppConfig

__all__ = ["group", "open_cache"]

#: What may follow a step's name in the name an entry was recorded for: slice
#: numbers (``[5]``, ``[1][3]``), then a nested recipe's ``.step`` (see :func:`_is_step`).
_STEP_TAIL = re.compile(r"(?:\[[0-9]+\])*(?:\..+)?", re.DOTALL)


def _given_dir(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """``--cache-dir`` as a Path, refused when blank as ``cache.dir`` is: ``Path("")``
    is the current directory, where `rm --all` would delete files not the cache's."""
    from shinobi.config import not_blank_dir
    from shinobi.errors import UsageError

    try:
        not_blank_dir(value, "leave it out for the configured cache")
    except ValueError as exc:
        raise UsageError(f"--cache-dir {exc} (an unset shell variable?)") from None
    return None if value is None else Path(value)


cache_dir_option = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    callback=_given_dir,
    help="The cache to work on (default: config cache.dir).",
)


def open_cache(cache_dir: Path | None, config: AppConfig | None = None) -> StepCache:
    """The cache ``--cache-dir`` names, else the configured one (``config``, which
    is loaded, and warned about, when the caller has not loaded it)."""
    from shinobi.cache import StepCache
    from shinobi.cli.main import file_in_the_way
    from shinobi.cli.named_config import warn_if_named_file_missing
    from shinobi.config import load_config
    from shinobi.errors import UsageError
    from shinobi.file_digests import large_read_notice

    if cache_dir is not None and not cache_dir.is_dir():  # a typo, not an empty cache
        blocking = file_in_the_way(str(cache_dir))
        why = f" ({blocking} is a file)" if blocking else ""
        raise UsageError(f"there is no step cache at {cache_dir}{why}; check the --cache-dir path")
    if cache_dir is None:
        if config is None:
            config = load_config()
            warn_if_named_file_missing()
        cache_dir = Path(config.cache_dir())
        # not made yet is an empty cache; a file there, or in the way, is a setting to mend
        blocking = file_in_the_way(str(cache_dir))
        if blocking is not None:
            origin = config.sources.get("cache.dir", "the configuration")
            what = (
                "is not a directory"
                if blocking == os.path.abspath(cache_dir)
                else f"cannot be a directory: {blocking} is a file"
            )
            raise UsageError(
                f"the step cache at {cache_dir} {what}; set cache.dir (from {origin}) to a"
                " directory, or give --cache-dir"
            )
    cache = StepCache(cache_dir)
    said: set[str] = set()

    def refused(message: str, topic: str) -> None:  # `ls --stale` and `prune` save the memo
        if topic not in said:
            said.add(topic)
            click.echo(f"ninja: warning: {message}", err=True)

    cache.on_refused = refused
    # `ls --stale` and `prune` hash the outputs they check: 17 s on a large one
    cache.memo.on_large = lambda path, _read: click.echo(
        f"ninja: {large_read_notice(path)}", err=True
    )
    return cache


def _when(stamp: float) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "?"
    except (OverflowError, ValueError, OSError):  # a time no clock shows
        return "?"


def _entries(cache: StepCache) -> list[CacheEntry]:
    """Every entry, damaged ones included; a cache directory that cannot be
    listed is the user's to fix, said in one line."""
    from shinobi.errors import UsageError

    try:
        found = list(cache.entries())
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise UsageError(
            f"cannot read the step cache at {cache.root}: {exc.strerror or exc}{where}"
        ) from None
    if cache.unlisted:  # a shared cache another user wrote under umask 077
        click.echo(
            f"ninja: warning: {len(cache.unlisted)} folder(s) of entries cannot be read by"
            f" this user ({cache.unlisted[0]}...): their entries are not listed, nor"
            " removed; their owner can, or can make them group-readable",
            err=True,
        )
    return found


def _remove(
    cache: StepCache, entries: list[CacheEntry], *, as_read: bool = False
) -> tuple[dict[str, str], set[str]]:
    """Remove ``entries``: the keys of those that could not be, and why; and (with
    ``as_read``) those left because a run stored or hit them since they were read
    (see :meth:`StepCache.remove`). The rest are gone."""
    failed: dict[str, str] = {}
    kept: set[str] = set()
    for entry in entries:
        try:
            if not cache.remove(entry, as_read=as_read):
                kept.add(entry.key)
        except OSError as exc:
            failed[entry.key] = f"{entry.key[:12]}: {exc.strerror or exc}"
    return failed, kept


def _entry_count(count: int) -> str:
    return counted(count, "entry", "entries")


def _unremoved(cache: StepCache, failed: dict[str, str]) -> None:
    """Say which entries are still there: the disk refused (a read-only or another
    user's cache), so exit 74 as any refusal of this machine's, naming the fix."""
    from shinobi.errors import MachineRefused

    if failed:
        raise MachineRefused(
            f"could not remove {_entry_count(len(failed))}: {'; '.join(failed.values())};"
            f" remove them where the cache at {cache.root} is writable, or as its owner"
        )


def _as_json(entry: CacheEntry, stale: bool | None = None, checked: bool = False) -> dict[str, Any]:
    """``entry`` as ``--json`` gives it; with ``checked``, its ``stale`` state too
    (None: made or last used on another host, and not looked at)."""
    data: dict[str, Any] = {
        "key": entry.key,
        "step": entry.step,
        "tool": entry.tool,
        "created": entry.created,
        # stored or last hit, whichever is later: what `prune --older-than` goes by
        "last_used": entry.used,
        "run_id": entry.run_id,
        "host": entry.host,
        "cwd": entry.cwd,
        # where it was last hit, when another directory than cwd (a moved project)
        "used_cwd": entry.used_cwd,
        "used_host": entry.used_host,
        "outputs": [rel for rel, _ in entry.files],
        "bytes": entry.size,
        "problem": entry.problem,
    }
    if checked:
        data["stale"] = stale
    return data


@click.group(short_help="List, remove or prune step-cache entries.")
def group() -> None:
    """Inspect and clean the step cache.

    A step whose tool, arguments, input contents, image and backend are all
    unchanged is not run again: its recorded result is reused, provided the
    outputs it left are still there unchanged. `ninja run --no-cache` runs
    every step regardless, and stores the new results in place of the old.
    """


all_hosts_option = click.option(
    "--all-hosts", is_flag=True, help="Check entries made on other hosts too (shared cache)."
)


def _checked_here(entry: CacheEntry, all_hosts: bool, host: str) -> bool:
    """Whether ``ls --stale`` and ``prune`` look at ``entry``'s outputs: those of
    an entry made (or last used, see :attr:`CacheEntry.place`) on another host are
    usually not visible here, and would look gone, so only with --all-hosts. An
    unusable entry is stale wherever it was made."""
    return all_hosts or entry.place_host == host or entry.problem is not None


@group.command("ls")
@cache_dir_option
@click.option(
    "--stale",
    "check",
    is_flag=True,
    help="Also say which entries can no longer hit (of this host's, unless --all-hosts).",
)
@all_hosts_option
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
def ls(cache_dir: Path | None, check: bool, all_hosts: bool, as_json: bool) -> None:
    """List cached step results, the most recently used first: the time shown
    is each one's last use (when it was stored, or last replayed by a hit), the
    time `prune --older-than` goes by; --json gives its `created` time too.

    With --stale, an entry made (or last used) on another host is shown as not checked (null
    in --json), as `prune` leaves it alone, unless --all-hosts is given.
    """
    cache = open_cache(cache_dir)
    entries = sorted(_entries(cache), key=lambda e: e.used, reverse=True)
    stale: dict[str, bool | None] = {}
    if check:
        host = this_host()
        for e in entries:
            stale[e.key] = cache.is_stale(e) if _checked_here(e, all_hosts, host) else None
        cache.close()  # what was read to tell is remembered, as a run remembers it
    if as_json:
        rows = [_as_json(e, stale.get(e.key), checked=check) for e in entries]
        click.echo(json.dumps({"cache_dir": str(cache.root), "entries": rows}, indent=2))
        return
    if not entries:
        click.echo(f"the step cache in {cache.root} is empty")
        return
    click.echo(f"{'key':<12}  {'last used':<16}  {'step':<24} {'tool':<16} host")
    marks = {True: "  STALE", False: "  ok", None: "  not checked here (--all-hosts checks it)"}
    host = this_host()
    for entry in entries:
        mark = marks[stale[entry.key]] if check else ""
        if check and stale[entry.key] is None and _checked_here(entry, all_hosts, host):
            mark = "  not checked here (this user may not read it or its outputs)"
        if entry.foreign:
            mark += "  (another user's: this user may not read it)"
        elif entry.problem is not None:
            mark += f"  (unusable: {entry.problem})"
        click.echo(
            f"{entry.key[:12]}  {_when(entry.used):<16}  {entry.step:<24} {entry.tool:<16}"
            f" {entry.host}{mark}"
        )
    click.echo(f"{_entry_count(len(entries))} in {cache.root}")


def _is_step(recorded: str, step: str) -> bool:
    """Whether an entry recorded for ``recorded`` belongs to ``step``: the step
    itself, a slice of it when it is scattered (``hash`` takes ``hash[5]``), or a
    step inside it when it is a nested recipe (``sub`` takes ``sub.a``, ``sub[2].a``)."""
    if not recorded.startswith(step):
        return False
    return _STEP_TAIL.fullmatch(recorded, len(step)) is not None


def _matching(cache: StepCache, keys: tuple[str, ...], step: str | None) -> list[CacheEntry]:
    from shinobi.errors import UsageError

    entries = _entries(cache)
    if step is not None:
        found = [e for e in entries if _is_step(e.step, step)]
        if not found:
            from shinobi.errors import did_you_mean

            steps = sorted({e.step for e in entries})
            raise UsageError(
                f"no cache entry is for a step {step!r}{did_you_mean(step, steps)}; an entry"
                " keeps the name of the step that stored it, so a step renamed since is"
                " found under its old name (`ninja cache ls` lists them, or run with"
                " --no-cache to run every step again)"
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
        if all(e.key != found[0].key for e in chosen):  # two prefixes of one key
            chosen.extend(found)
    return chosen


@group.command("rm")
@cache_dir_option
@click.argument("keys", nargs=-1)
@click.option(
    "--step",
    help="Remove every entry recorded for the step of this name (every slice of a scattered"
    " one, every step of a nested recipe), in every project that uses this cache.",
)
@click.option("--all", "everything", is_flag=True, help="Remove every entry.")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
def rm(
    cache_dir: Path | None,
    keys: tuple[str, ...],
    step: str | None,
    everything: bool,
    dry_run: bool,
) -> None:
    """Remove cache entries by KEY (a prefix is enough), by --step, or --all.

    --all removes every entry file, damaged ones and other versions' included.
    A step's name is not a project's: --step removes the entries of every
    project using this cache whose step has that name, and says which
    projects they were in (--dry-run first to see).
    """
    from shinobi.errors import UsageError

    named = sum(x is not None and x != () and x is not False for x in (keys, step, everything))
    if named == 0:
        raise UsageError("name what to remove: KEY..., --step NAME or --all")
    if named > 1:
        raise UsageError("KEY..., --step and --all each say what to remove: give only one")
    cache = open_cache(cache_dir)
    entries = _entries(cache) if everything else _matching(cache, keys, step)
    unusable = sum(e.problem is not None for e in entries)
    note = f" ({unusable} of them damaged or from another version)" if unusable else ""
    if dry_run:
        click.echo(f"would remove {_entry_count(len(entries))}{note}{_projects(entries)}")
        for entry in entries:
            click.echo(f"  {entry.key[:16]}  {entry.step}  {entry.used_cwd or entry.cwd}")
        return
    failed, _ = _remove(cache, entries)
    click.echo(f"removed {_entry_count(len(entries) - len(failed))}{note}{_projects(entries)}")
    _unremoved(cache, failed)


def _projects(entries: list[CacheEntry]) -> str:
    """``; of 3 projects: /a, /b, /c``: where the entries were last used, when more
    than one project (a step's name, ``image``, is no project's own)."""
    places = sorted({e.used_cwd or e.cwd for e in entries if e.used_cwd or e.cwd})
    if len(places) < 2:
        return ""
    return f"; of {len(places)} projects: {listed(places, 5)}"


@group.command("prune")
@cache_dir_option
@click.option(
    "--older-than",
    "older_than",
    metavar="AGE",
    help="Also remove entries not used for AGE (neither stored nor hit since):"
    " 30d, 12h, 2w (a bare number is days).",
)
@all_hosts_option
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

    Outputs are looked for in the directory where an entry was last used (a
    moved project's, once a run there hit it), else where it was made. Only
    entries made (or last used) on this host are checked unless --all-hosts is given: in
    a cache shared with a cluster, another host's outputs are usually not
    visible here, and would look gone. Damaged entries, and those written by
    an older ninja, are removed wherever they were made; those of a newer
    ninja sharing the cache are left to it. --older-than AGE also removes the
    entries not used for that long: neither stored nor replayed by a hit since.
    """
    from shinobi.errors import UsageError

    cache = open_cache(cache_dir)
    cutoff = time.time() - parse_age(older_than) if older_than is not None else None
    host = this_host()
    doomed: list[tuple[CacheEntry, str]] = []
    failed: dict[str, str] = {}
    kept: set[str] = set()
    try:
        for entry in cache.entries():
            why = _why_prune(cache, entry, cutoff, _checked_here(entry, all_hosts, host))
            if why is not None:
                doomed.append((entry, why))
        leftovers = cache.leftovers()
        if not dry_run:
            failed, kept = _remove(cache, [entry for entry, _ in doomed], as_read=True)
            for path in leftovers:
                path.unlink(missing_ok=True)
        # the outputs just read are remembered, or every prune would read them all again
        cache.close()
        if not dry_run:
            cache.memo.prune()  # digests remembered for files that are gone
    except OSError as exc:  # not a cache directory, or one this user cannot change
        raise UsageError(f"cannot prune the cache at {cache.root}: {exc}") from None
    verb = "would remove" if dry_run else "removed"
    gone = [(e, why) for e, why in doomed if e.key not in failed and e.key not in kept]
    if as_json:
        rows = [{**_as_json(e), "reason": why} for e, why in gone]
        click.echo(json.dumps({"dry_run": dry_run, "entries": rows}, indent=2))
        _unremoved(cache, failed)
        return
    for entry, why in gone:
        click.echo(f"{verb} {entry.key[:12]}  {entry.step}  ({why})")
    click.echo(
        f"{verb} {_entry_count(len(gone))}"
        + (f" and {len(leftovers)} unfinished write(s)" if leftovers else "")
        + (f"; kept {_entry_count(len(kept))} a run stored or used while prune ran" if kept else "")
    )
    _unremoved(cache, failed)


def _why_prune(
    cache: StepCache, entry: CacheEntry, cutoff: float | None, checked: bool
) -> str | None:
    """Why ``prune`` removes ``entry``, or None to keep it.

    ``checked`` says whether its outputs are to be looked at (made on this
    host, or --all-hosts). An entry no ninja of this version can use goes
    wherever it was made, unless a newer ninja wrote it.
    """
    if entry.problem is not None:  # a newer ninja's, or another user's: not this one's
        return None if entry.newer or entry.foreign else entry.problem
    if cutoff is not None and entry.used < cutoff:
        return f"last used {_when(entry.used)}"
    if checked and cache.is_stale(entry):
        return "outputs gone or changed"
    return None
