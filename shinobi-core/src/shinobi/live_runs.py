"""The other runs of this workdir going now, and tools a killed one left running.

Two runs in one workdir at once each write the paths their recipes name: the
same recipe started twice hands each run the other's products, and both say
ok. A run started beside another is warned of it.

A ninja killed outright (``kill -9``, the out-of-memory killer) cannot tear
its steps down: a tool it started runs on, writing its product. The next
run in the same workdir starts the same step again (it never finished), and
the two writers interleave: a table writer that opens and closes its file
for every row is invisible to the live-writer check (:mod:`shinobi.stale`),
which sees only files open at that instant, and the run reported success
and cached the mixture. A run refuses to start beside such orphans.

Every run leaves a marker in ``.shinobi/live/`` while it runs, named by its
teardown tag prefix (see :func:`shinobi.teardown.run_prefix`: its ninja's
pid) and its run id, and removes it as it ends. A marker whose ninja is
alive is a run going; one whose ninja is gone names a run that ended
abruptly, and the processes that still carry its tag are its orphans. So are
the batch jobs it listed in its ledgers (``--backend slurm``), which the
backend that submitted them is asked about (:mod:`shinobi.left_jobs`); when it
cannot be asked, the run is warned instead. A marker with nothing of its run
left is removed. Looking costs one directory listing, and a scan of ``/proc``
(and a question to a batch engine) only after a run ended abruptly.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from shinobi.errors import MachineRefused
from shinobi.host_name import this_host
from shinobi.local_runs import pid_alive

if TYPE_CHECKING:
    from shinobi.left_jobs import LeftJobs, Settings

__all__ = [
    "LIVE_DIR",
    "launches_going",
    "left_tools",
    "live_stamp",
    "mark_live",
    "other_runs",
    "runs_beside",
    "unmark_live",
]

#: Beside the run folders (``.shinobi/runs``), so no listing of runs meets it.
LIVE_DIR = "live"


def _live_dir(runs_root: Path) -> Path:
    return runs_root.parent / LIVE_DIR


def mark_live(runs_root: Path, run_id: str, cwd: str | None = None) -> Path | None:
    """Leave the marker of the run ``run_id`` of this process, whose steps work in
    ``cwd``; None when it cannot be written (a read-only or full disk: the run
    goes on unguarded). The other runs of the same ``cwd`` are nudged (see
    :func:`runs_beside`)."""
    from shinobi.teardown import run_prefix

    marker = _live_dir(runs_root) / f"{run_prefix()}{run_id}"
    try:
        from shinobi.file_digests import make_dirs

        make_dirs(marker.parent)  # shared as its workspace is
        # its name says whose ninja and which run; its text, on which host (a
        # workdir on a shared file system is seen from login and compute nodes)
        # and in which directory its steps write (one workdir may serve many)
        # (a directory's name need not be UTF-8: its bytes are written as they are)
        said = this_host() if cwd is None else f"{this_host()}\n{cwd}"
        marker.write_bytes(os.fsencode(said))
    except OSError:
        return None
    _nudge(marker, cwd)
    return marker


def unmark_live(marker: Path | None) -> None:
    """Remove the marker :func:`mark_live` left, as the run ends (nudging the
    other runs of its directory)."""
    if marker is not None:
        _, cwd = _said(marker)
        with contextlib.suppress(OSError):
            marker.unlink()
        _nudge(marker, cwd)


def _said(marker: Path) -> tuple[str | None, str | None]:
    """The host and the directory a marker names (None: unreadable, or not said)."""
    try:
        host, _, cwd = os.fsdecode(marker.read_bytes()).partition("\n")
    except OSError:
        return None, None
    return host.strip() or None, cwd.strip() or None


def _nudge(marker: Path, cwd: str | None) -> None:
    """Touch the markers of the other runs working in ``cwd`` beside ``marker``'s: a
    run that starts or ends beside a step of theirs changes their marker's time,
    which the step looks at before its result is stored (:func:`runs_beside`)."""
    if cwd is None:
        return
    try:
        names = os.listdir(marker.parent)
    except OSError:
        return
    for name in names:
        other = marker.parent / name
        if name != marker.name and _owner(name) is not None and _said(other)[1] == cwd:
            with contextlib.suppress(OSError):
                os.utime(other)


def other_runs(
    runs_root: Path, settings: Settings | None = None, cwd: str | None = None
) -> list[str]:
    """Warnings of the other runs of this workdir going now; raises
    :class:`MachineRefused` when a tool or a batch job of one whose ninja is gone
    still runs (see the module docstring). ``settings``: a backend's configuration
    table by its name, for asking it about such a run's jobs (default: the
    configuration of the current directory). ``cwd``: where this run's steps
    write; a run whose steps write elsewhere (another project sharing one
    ``execution.workdir``) is none of its business. None: every run counts.

    Two runs in one workdir at once each write the paths their recipes name:
    the same recipe twice hands each run the other's products, and both say ok.
    """
    live = _live_dir(runs_root)
    try:
        markers = os.listdir(live)
    except OSError:  # no run of this workdir has marked itself: the usual case
        return []
    found: list[tuple[str, list[int]]] = []
    going: list[str] = []
    dead: dict[str, Path] = {}  # the markers of runs whose ninja is gone, by run id
    for name in markers:  # this run's own is not made yet: one of this process is another's
        other = _other_run(live, name, cwd)
        if other is None:
            continue
        owner, host = other
        tags, _, run = name.partition(".")
        if host is not None:  # its pid means nothing here, nor do this host's processes
            going.append(f"{run} (pid {owner} on {host})")
            continue
        if pid_alive(owner):
            going.append(f"{run} (pid {owner})")
            continue
        orphans = _orphans(tags + ".")
        if orphans:
            found.append((run, orphans))
        dead[run] = live / name
    left = _jobs_of(runs_root, list(dead), settings) if dead else []
    keep = {run for run, _ in found} | {jobs.run_id for jobs in left if not jobs.ended}
    for run, marker in dead.items():
        if run not in keep:  # nothing of it runs any more
            with contextlib.suppress(OSError):
                marker.unlink()
    alive = [jobs for jobs in left if jobs.alive]
    if found or alive:
        raise _refusal(found, alive)
    said = [_unknown(jobs, runs_root) for jobs in left if jobs.unknown is not None]
    if not going:
        return said
    return [
        *said,
        f"another run is going in this workdir: {', '.join(going)}; a step of each that"
        " writes the same path takes the other's product for its own (wait for it, or run"
        " in another directory)",
    ]


def live_stamp(marker: Path | None) -> int | None:
    """When ``marker`` was last nudged (ns): when a run of its directory last
    started or ended (see :func:`_nudge`). None without a marker."""
    if marker is None:
        return None
    try:
        return os.stat(marker).st_mtime_ns
    except OSError:
        return None


def runs_beside(marker: Path | None, stamp: int | None, cwd: str) -> str | None:
    """The other runs of ``cwd`` (the directory of ``marker``'s run) going now, or
    "one that has ended since" when one started or ended after ``stamp``
    (:func:`live_stamp`); None when there was none.

    The run started first was never told of one started beside it, and a
    step of it whose output the other run overwrote stored the other's
    product in the step cache as its own, to be replayed to later runs. A
    step's result is therefore stored only when this says None. It costs a
    directory listing, for a step whose result is stored.
    """
    if marker is None:  # a run left unguarded (its marker could not be written)
        return None
    live = marker.parent
    try:
        names = os.listdir(live)
        changed = stamp is not None and os.stat(marker).st_mtime_ns != stamp
    except OSError:
        return None
    going = [
        name.partition(".")[2]
        for name in names
        if name != marker.name
        and (other := _other_run(live, name, cwd)) is not None
        and (other[1] is not None or pid_alive(other[0]))
    ]
    if going:
        return ", ".join(sorted(going))
    return "one that has ended since" if changed else None


def left_tools(runs_root: Path, run_id: str) -> list[int]:
    """The pids of the tools the run ``run_id`` left running when its ninja went away
    without tearing them down (``kill -9``); none while its ninja lives, or when
    it ran on another host (whose processes cannot be seen from here)."""
    live = _live_dir(runs_root)
    try:
        names = [n for n in os.listdir(live) if n.partition(".")[2] == run_id]
    except OSError:
        return []
    for name in names:
        other = _other_run(live, name, None)
        if other is not None and other[1] is None and not pid_alive(other[0]):
            return _orphans(name.partition(".")[0] + ".")
    return []


def _other_run(live: Path, name: str, cwd: str | None) -> tuple[int, str | None] | None:
    """The pid of the ninja whose marker is ``name``, and its host when that is
    another (a marker of an older ninja names none, or is gone meanwhile); None
    for no run's marker, or one of a run that works elsewhere than ``cwd``
    (which may be it when either does not say). One read of the marker."""
    owner = _owner(name)
    if owner is None:
        return None
    host, theirs = _said(live / name)
    if cwd is not None and theirs is not None and theirs != cwd:
        return None
    return owner, host if host and host != this_host() else None


def launches_going(workdir: Path) -> list[str]:
    """Warnings of the launches (``ninja compile --submit``) of the workspace
    ``workdir`` still running, for a run starting there (see
    :func:`shinobi.launch.state.launches_going`). A workdir where nothing was
    ever launched costs a directory listing, and one whose launches are known to
    have ended a listing of each recipe's folder."""
    from shinobi.launch.folders import unended

    if not unended(workdir):  # nothing launched here, or all of it has ended: the usual case
        return []
    from shinobi.launch.state import launches_going as going

    return going(workdir)


def _jobs_of(runs_root: Path, runs: list[str], settings: Settings | None) -> list[LeftJobs]:
    """What the backends say of the batch jobs ``runs`` listed (their ledgers)."""
    from shinobi.left_jobs import left_jobs

    return left_jobs([runs_root / run for run in runs if run], settings)  # "": no run's


def _refusal(found: list[tuple[str, list[int]]], alive: list[LeftJobs]) -> MachineRefused:
    """The refusal to start beside the tools (``found``: pids by run) and the batch
    jobs (``alive``) of runs whose ninja is gone."""
    said = [f"{_listed(pids)} of run {run}" for run, pids in found]
    said += [f"{jobs.named} of run {jobs.run_id} ({jobs.alive_as})" for jobs in alive]
    stops = [f"kill {' '.join(str(pid) for _, pids in found for pid in pids)}"] if found else []
    stops += [jobs.how_to_stop for jobs in alive]
    what = " and ".join(["tools"] * bool(found) + list(dict.fromkeys(j.kind for j in alive)))
    return MachineRefused(
        f"{what} an earlier run started here still run, though its ninja is gone (killed?):"
        f" {'; '.join(said)}; they may write into this run's outputs: stop them"
        f" ({'; '.join(stops)}) or wait for them to end, then run again"
    )


def _unknown(jobs: LeftJobs, runs_root: Path) -> str:
    """The warning for a dead run's batch jobs whose backend could not be asked."""
    return (
        f"run {jobs.run_id} of this workdir ended abruptly (its ninja is gone: killed?) after"
        f" starting {jobs.engine} {jobs.noun}s, and whether they still run could not be asked"
        f" ({jobs.unknown}); one that does may write into this run's outputs: stop any left"
        f" (listed in {runs_root / jobs.run_id / jobs.ledger})"
    )


def _owner(name: str) -> int | None:
    """The pid of the ninja a marker (``PID-TOKEN.RUN``) belongs to."""
    pid, dash, _ = name.partition("-")
    return int(pid) if dash and pid.isdigit() else None


def _orphans(prefix: str) -> list[int]:
    from shinobi.teardown import process_table

    return sorted(process_table().members(None, prefix, prefix=True))


def _listed(pids: list[int]) -> str:
    from shinobi.stale import command_of

    shown = ", ".join(f"pid {pid} ({command_of(pid)})" for pid in pids[:3])
    return shown + (f" and {len(pids) - 3} more" if len(pids) > 3 else "")
