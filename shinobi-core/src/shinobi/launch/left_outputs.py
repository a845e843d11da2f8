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
A job array's tasks are looked at one by one: each that started and then
failed or was cancelled (:attr:`StepState.unfinished_tasks`) is judged by
the paths of its own slice (``slices`` in the job's details), between its
own start and end; the slices that completed are whole, and are not named.
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
        job = handle.job(step.step)
        if job is None:
            continue
        if step.tasks is not None:
            slices = job.details.get("slices")
            for task in step.unfinished_tasks:
                paths = _slice(slices, task.task)
                name = f"{step.step}[{task.task}]"
                _note(status, name, paths, task.phase, task.started, task.finished)
        elif step.phase in ("failed", "cancelled") and step.started:
            _note(status, step.step, job.details, step.phase, step.started, step.finished)
    return status


def _note(
    status: LaunchStatus,
    name: str,
    recorded: object,
    phase: str,
    started: str | None,
    finished: str | None,
) -> None:
    """Add to ``status`` a note for each path ``recorded`` (``writes`` and
    ``rewrites``) that the job or task ``name`` may have left incomplete."""
    if not isinstance(recorded, dict):
        return
    writes, rewrites = _paths(recorded.get("writes")), _paths(recorded.get("rewrites"))
    if not writes and not rewrites:
        return
    ended = "failed" if phase == "failed" else "was cancelled"
    since = max(status.handle.created, _moment(started) or 0.0)
    until = _moment(finished, END_SLACK)
    for warning in left_by_job(writes, rewrites, since, until, ended):
        status.notes.append(f"step {name!r}: {warning}")


def _slice(slices: object, task: int) -> object:
    """What the handle recorded of an array's task ``task`` (None: nothing)."""
    if isinstance(slices, list) and 0 <= task < len(slices):
        return slices[task]
    return None


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
