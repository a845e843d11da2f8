"""From a backend's raw run to the StepResult a step yields.

Cab steps and out-of-process pysteps read their outputs differently but
report a run the same way; this is that one way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shinobi.backends.base import BackendRun, Invocation
from shinobi.steps.result import StepResult, StepStatus, kept_tail

__all__ = ["result_of_run"]


def result_of_run(
    name: str,
    run: BackendRun,
    invocation: Invocation,
    backend_name: str,
    started: float,
    finished: float,
    *,
    outputs: dict[str, Any],
    error: str | None,
    warnings: Sequence[str] = (),
) -> StepResult:
    """The StepResult of ``run``; a cancelled run is reported as interrupted."""
    status: StepStatus = "cancelled" if run.cancelled else ("failed" if error else "ok")
    result = StepResult(
        name=name,
        status=status,
        outputs=outputs,
        returncode=run.returncode,
        stdout=kept_tail(run.stdout),  # the wranglers have read the whole of it
        stderr=kept_tail(run.stderr),
        error=_interrupted(run) if run.cancelled else error,
        signal=run.signal,
        warnings=[*warnings, *_left_running(run), *_stopped(run)],
        backend=backend_name,
        argv=list(invocation.argv),
        started=started,
        finished=finished,
        details=dict(run.details),
    )
    if run.engine_stderr:  # kept apart: not the tool's, yet it may say why it failed
        result.details["engine_stderr"] = kept_tail(run.engine_stderr)
    if run.undying:
        result.details["undying"] = list(run.undying)
    return result


def _left_running(run: BackendRun) -> list[str]:
    """The warning of a step that left processes running, which may still
    change its outputs after the next step or the cache took them."""
    if not run.left_running or run.cancelled:
        return []
    return [
        f"it left {', '.join(run.left_running)} running, which may still change its"
        " outputs; make the step wait for what it starts, or, if it starts a service on"
        " purpose, detach it from the step (`setsid env -u SHINOBI_TEARDOWN_TAG CMD`, with"
        " its output sent elsewhere) (this result is not cached)"
    ]


def _stopped(run: BackendRun) -> list[str]:
    """The warning of a failed step whose leftover processes were stopped, so
    the user knows the step started more than it waited for, and which of
    them may not have died."""
    if not run.stopped:
        return []
    said = (
        f"it failed and left {', '.join(run.stopped)} running; they were stopped"
        " (SIGTERM, SIGKILL after the grace period) so that nothing of this failed"
        " step writes into a later step or run"
    )
    if run.undying:
        pids = ", ".join(str(p) for p in run.undying)
        said += (
            f", but pid(s) {pids} would not die (uninterruptible I/O?): wait for them to"
            " end before running it again"
        )
    return [said]


def _interrupted(run: BackendRun) -> str:
    """A cancelled step's error: ``interrupted``, or, when the backend could not
    confirm it stopped (a Slurm job whose scancel was never confirmed), what it
    said about how to check and stop what may still run."""
    if run.details.get("still_running") and run.reason:
        return run.reason
    return "interrupted"
