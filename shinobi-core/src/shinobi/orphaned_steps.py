"""Tools an earlier ninja started in this workdir and left running when it died.

A ninja killed outright (``kill -9``, the out-of-memory killer) cannot tear
its steps down: a tool it started runs on, writing its product. The next
run in the same workdir starts the same step again (it never finished), and
the two writers interleave: a table writer that opens and closes its file
for every row is invisible to the live-writer check (:mod:`shinobi.stale`),
which sees only files open at that instant, and the run reported success
and cached the mixture.

So every run leaves a marker in ``.shinobi/live/`` (named by its teardown
tag prefix, see :func:`shinobi.teardown.run_prefix`, and its run id) while it runs, and
removes it as it ends. A marker whose ninja is gone names a run that ended
abruptly; the processes that still carry its tag are its orphans, and the
next run refuses to start beside them. A marker with no orphan left is
removed. Looking costs one directory listing when no run ended abruptly,
and a scan of ``/proc`` only when one did.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from shinobi.errors import MachineRefused

__all__ = ["LIVE_DIR", "mark_live", "refuse_orphans", "unmark_live"]

#: Beside the run folders (``.shinobi/runs``), so no listing of runs meets it.
LIVE_DIR = "live"


def _live_dir(runs_root: Path) -> Path:
    return runs_root.parent / LIVE_DIR


def mark_live(runs_root: Path, run_id: str) -> Path | None:
    """Leave the marker of the run ``run_id`` of this process; None when it cannot
    be written (a read-only or full disk: the run goes on unguarded)."""
    from shinobi.teardown import run_prefix

    marker = _live_dir(runs_root) / f"{run_prefix()}{run_id}"
    try:
        marker.parent.mkdir(exist_ok=True)
        marker.write_text(run_id)
    except OSError:
        return None
    return marker


def unmark_live(marker: Path | None) -> None:
    """Remove the marker :func:`mark_live` left, as the run ends."""
    if marker is not None:
        with contextlib.suppress(OSError):
            marker.unlink()


def refuse_orphans(runs_root: Path) -> None:
    """Raise :class:`MachineRefused` when a tool of a run of this workdir whose
    ninja is gone still runs (see the module docstring)."""
    live = _live_dir(runs_root)
    try:
        markers = os.listdir(live)
    except OSError:  # no run of this workdir has marked itself: the usual case
        return
    found: list[tuple[str, list[int]]] = []
    for name in markers:
        owner = _owner(name)
        if owner is None or _alive(owner):
            continue
        orphans = _orphans(name.partition(".")[0] + ".")
        if orphans:
            found.append((_read(live / name), orphans))
        else:
            with contextlib.suppress(OSError):
                (live / name).unlink()
    if found:
        said = "; ".join(f"{_listed(pids)} of run {run}" for run, pids in found)
        every = " ".join(str(pid) for _, pids in found for pid in pids)
        raise MachineRefused(
            "tools an earlier run started here still run, though its ninja is gone (killed?):"
            f" {said}; they may write into this run's outputs: stop them (kill {every}) or"
            " wait for them to end, then run again"
        )


def _owner(name: str) -> int | None:
    """The pid of the ninja a marker (``PID-TOKEN.RUN``) belongs to."""
    pid, dash, _ = name.partition("-")
    return int(pid) if dash and pid.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _orphans(prefix: str) -> list[int]:
    from shinobi.teardown import process_table

    return sorted(process_table().members(None, prefix, prefix=True))


def _listed(pids: list[int]) -> str:
    from shinobi.stale import command_of

    shown = ", ".join(f"pid {pid} ({command_of(pid)})" for pid in pids[:3])
    return shown + (f" and {len(pids) - 3} more" if len(pids) > 3 else "")


def _read(marker: Path) -> str:
    try:
        return marker.read_text().strip() or "?"
    except OSError:
        return "?"
