"""How many steps the open-file limit lets run at once.

Every running step holds descriptors in ninja's process: measured in
``/proc/PID/fd`` during a run of a native step that writes to both streams,
two pipes (four ends: ninja keeps the write ends until the leader exits, see
:func:`shinobi.backends.streams.pump`), a pidfd and its two log files; one
more is open for a moment when it starts (Popen's error pipe) or ends (its
outputs hashed). Many clusters set the soft ``nofile`` limit to 1024, which
is 125 steps: a scatter with ``max_workers=300`` failed every slice past
that with EMFILE.

So a run that needs more raises its soft limit, once, as far as it needs and
no further than the hard limit (as build tools and servers do). A run that
fits in the limit it was given leaves it alone, so its steps inherit exactly
the limits the user set; a run that raised it passes the raised soft limit on
to its steps (resetting it in each child would need a ``preexec_fn``, which
costs every step a fork in Python and rules out ``posix_spawn``). When even
the hard limit is too low, fewer steps run at once: a scientist loses no
work, only time, and is told how to get it back (``ulimit -n``).

``resource`` is imported here, when a run with several workers starts, never
on the way to ``ninja --help``.
"""

from __future__ import annotations

import errno
import os

__all__ = ["FDS_PER_STEP", "RESERVED", "exhausted", "steps_at_once", "too_few_files"]

#: Descriptors a running step holds at most (7 measured, and 1 for a moment).
FDS_PER_STEP = 8

#: Descriptors kept for ninja's own work besides what it had open when the run
#: started: records, the cache, a backend's sockets, a pystep's files.
RESERVED = 64

#: The soft limit ninja set or found, once it looked; None before.
_soft: int | None = None


def _open_now() -> int:
    """How many descriptors this process has open (a guess where /proc is missing)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 16


def _raised_to(needed: int) -> int:
    """The soft RLIMIT_NOFILE after raising it toward ``needed`` (at most the hard limit)."""
    try:
        import resource
    except ImportError:  # not a POSIX system: nothing to raise
        return needed
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return max(needed, 1 << 20)
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # a kernel cap below the hard limit (nr_open)
            pass
    return int(soft)


def steps_at_once(workers: int) -> int:
    """How many of ``workers`` steps may run at once in this process's open-file limit.

    Raises the soft limit the first time a run needs more than it has; later
    runs (and nested recipes) that fit in what was found cost no system call.
    """
    global _soft
    if workers <= 1 or (_soft is not None and _soft >= RESERVED + workers * FDS_PER_STEP):
        return workers
    in_use = _open_now()
    _soft = _raised_to(in_use + RESERVED + workers * FDS_PER_STEP)
    room = (_soft - in_use - RESERVED) // FDS_PER_STEP
    return max(1, min(workers, room))


def too_few_files(workers: int, at_once: int) -> str:
    """The warning for a run held to ``at_once`` of its ``workers`` steps at a time."""
    limit = _soft if _soft is not None else 0
    wanted = limit + (workers - at_once) * FDS_PER_STEP
    return (
        f"at most {at_once} steps run at once, not {workers}: each running step holds up to"
        f" {FDS_PER_STEP} open files and the open-file limit is {limit}, its hard limit too;"
        f" run with `ulimit -n {wanted}` where the hard limit (`ulimit -Hn`) allows it,"
        " or lower max_workers"
    )


def exhausted(exc: BaseException) -> str | None:
    """A step that could not start for want of descriptors, said as the machine's
    limit and its fix; None for any other error."""
    if not isinstance(exc, OSError):
        return None
    if exc.errno == errno.EMFILE:
        return (
            "too many open files: ninja reached its open-file limit starting this step;"
            " raise it (`ulimit -n`) or lower max_workers"
        )
    if exc.errno == errno.ENFILE:
        return (
            "too many open files on this machine: the system's file table is full;"
            " lower max_workers or run when the machine is less busy"
        )
    return None
