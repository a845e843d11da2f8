"""What a launch's job left half-written when it failed or was cancelled.

A job of a compiled launch that runs past its time limit, is killed for
memory or is cancelled while it writes a Measurement Set leaves the part
under the product's name, on the cluster's shared disk. ``ninja run`` says
so of a step it was running (see :func:`shinobi.interrupted_outputs.unfinished`);
a compiled launch has no ninja watching it, so ``ninja status`` says it, from
the paths the submitter recorded with each job (``writes`` and ``rewrites`` in
its details, see :meth:`shinobi.offload.jobs.Job.left_paths`).

Only a job that started is looked at, and only what was stamped after it
started (and after the launch was submitted) and not clearly after it ended:
a product an earlier launch left, a file a job before it wrote, or one a
later run of the step wrote, is not this job's.
A job array's slices share one step's row, and which slice failed is not
known here, so its outputs are not named (its completed slices' would be).
"""

from __future__ import annotations

from datetime import datetime

from shinobi.interrupted_outputs import left_by_job
from shinobi.launch.tracking import LaunchStatus

__all__ = ["END_SLACK", "with_left_outputs"]

#: Seconds after the engine's end of a job that a path it wrote may still be
#: stamped: the engine's clock (a second's resolution) is not the file server's.
END_SLACK = 60.0


def with_left_outputs(status: LaunchStatus) -> LaunchStatus:
    """``status`` with a note for each output its failed or cancelled jobs may
    have left incomplete (its summary line carries the notes)."""
    handle = status.handle
    for step in status.steps:
        if step.phase not in ("failed", "cancelled") or not step.started or step.tasks:
            continue
        job = handle.job(step.step)
        if job is None:
            continue
        writes, rewrites = _paths(job.details.get("writes")), _paths(job.details.get("rewrites"))
        if not writes and not rewrites:
            continue
        ended = "failed" if step.phase == "failed" else "was cancelled"
        since = max(handle.created, _moment(step.started) or 0.0)
        until = _moment(step.finished, END_SLACK)
        for warning in left_by_job(writes, rewrites, since, until, ended):
            status.notes.append(f"step {step.step!r}: {warning}")
    return status


def _paths(value: object) -> list[str]:
    """The paths a handle's job lists (a hand-edited handle may hold anything)."""
    return [p for p in value if isinstance(p, str) and p] if isinstance(value, list) else []


def _moment(text: str | None, slack: float = 0.0) -> float | None:
    """A time the engine gave (``2026-12-06T01:08:21``, as sacct says it, on this
    host's clock), as a time stamp with ``slack`` added; None when it gave none,
    or gave it in a form not read here."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp() + slack
    except ValueError:
        return None
