"""The process submitting a launch, and a cancel that reaches it while it does.

``ninja cancel`` of a launch still being submitted cancelled the jobs on
record so far, and said the submitter had stopped; the submitter went on, and
the jobs it handed over afterwards ran. Now ``ninja cancel`` leaves a mark in
the launch's folder, the submitter looks for it each time a job is on record
(:class:`~shinobi.launch.handle.JobJournal`), and on finding it stops and
cancels every job it submitted. ``ninja status`` and ``ninja cancel`` tell a
submitter still at work from one that stopped by its host, pid and start time.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from shinobi.errors import ShinobiError
from shinobi.host_name import this_host

if TYPE_CHECKING:
    from shinobi.launch.handle import LaunchHandle

__all__ = [
    "CANCEL_NAME",
    "LaunchCancelled",
    "cancel_requested",
    "request_cancel",
    "submitter_running",
]

#: The mark ``ninja cancel`` leaves in a launch's folder for its submitter.
CANCEL_NAME = "cancel-requested"


class LaunchCancelled(ShinobiError):
    """``ninja cancel`` asked the submitter to stop while it was submitting."""

    exit_code = 1


def request_cancel(handle: LaunchHandle) -> None:
    """Leave the mark the submitter of ``handle`` stops at (a folder gone: no submitter)."""
    with contextlib.suppress(OSError):
        (handle.run_dir / CANCEL_NAME).touch()


def cancel_requested(handle: LaunchHandle) -> bool:
    """Whether ``ninja cancel`` has asked ``handle``'s submitter to stop."""
    return os.path.exists(handle.run_dir / CANCEL_NAME)


def submitter_running(handle: LaunchHandle) -> int | None:
    """The pid of the process still submitting ``handle`` on this host, or None: the
    launch is submitted, its submitter stopped, or it runs on another host (which
    cannot be asked, and is taken for stopped, as before)."""
    by = handle.submitted_by
    if handle.state != "submitting" or not by or by.get("host") != this_host():
        return None
    pid = by.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return None
    started = _process_started(pid)
    # a process started after the launch was made holds a reused pid: not the submitter
    if started is None or started > handle.created + 1.0:
        return None
    return pid


def _process_started(pid: int) -> float | None:
    """When process ``pid`` started (epoch seconds), or None when there is none."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
        with open("/proc/stat", encoding="ascii", errors="replace") as fh:
            boot = next(line for line in fh if line.startswith("btime "))
    except (OSError, StopIteration):
        return None
    try:  # the fields after the command's name, which may hold spaces and ")"
        ticks = int(stat[stat.rindex(")") + 2 :].split()[19])
        return int(boot.split()[1]) + ticks / os.sysconf("SC_CLK_TCK")
    except (ValueError, IndexError):
        return None
