"""Launch state as text: the per-step table of ``ninja status`` and the rows of ``ninja runs``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from shinobi.launch.submitter import submitter_running
from shinobi.launch.tracking import LaunchStatus, StepState
from shinobi.render.terminal_text import columns, for_terminal, padded

if TYPE_CHECKING:
    from shinobi.local_runs import LocalRun

__all__ = ["format_time", "local_runs_table", "runs_table", "status_lines"]


def format_time(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [columns(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths[i], columns(cell))
    lines = []
    for row in [header, *rows]:
        cells = [padded(cell, widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return lines


def _short(stamp: str | None) -> str:
    if not stamp or stamp in ("Unknown", "None"):
        return "-"
    return stamp.replace("T", " ")[-8:] if "T" in stamp else stamp


def _step_row(step: StepState) -> list[str]:
    phase: str = step.phase
    if step.tasks:
        phase = f"{phase} ({_task_counts(step.tasks)})"
    return [
        step.step,
        step.job_id or "-",
        phase,
        step.engine_state or "-",
        _short(step.started),
        _short(step.finished),
        for_terminal(step.detail or ""),  # it may quote the scheduler or the tool
    ]


def _task_counts(tasks: dict[str, int]) -> str:
    """``2 of 3 tasks done, 1 cancelled``: an array's tasks that completed, and those cancelled.

    "failed (2/3 tasks)" read as two tasks failed when two had succeeded.
    """
    total = sum(tasks.values())
    said = f"{tasks.get('completed', 0)} of {total} tasks done"
    cancelled = tasks.get("cancelled", 0)
    return f"{said}, {cancelled} cancelled" if cancelled else said


def status_lines(status: LaunchStatus) -> list[str]:
    """The header, one row per step, and the summary line."""
    handle = status.handle
    lines = [
        f"launch {handle.name}  engine {handle.engine}  submitted {format_time(handle.created)}",
    ]
    if handle.path is not None:
        lines.append(f"handle {handle.path}")
    submitter = submitter_running(handle)
    if submitter is not None:
        lines.append(
            f"note: still being submitted (by pid {submitter}); a step whose job is not"
            " handed over yet shows as pending"
        )
    elif handle.state == "submitting":
        lines.append(
            "note: the submitter stopped before it finished submitting; a step whose job"
            " neither it recorded nor the scheduler knows shows as never submitted"
        )
    header = ["STEP", "JOB", "STATE", "ENGINE", "START", "END", "DETAIL"]
    lines.extend(_table(header, [_step_row(s) for s in status.steps]))
    lines.append(for_terminal(status.summary()))  # a scheduler's error, as it said it
    return lines


def runs_table(statuses: list[LaunchStatus]) -> list[str]:
    header = ["RUN", "RECIPE", "ENGINE", "SUBMITTED", "STATE", "SUMMARY"]
    rows = [
        [
            s.handle.run_id,
            s.handle.recipe,
            s.handle.engine,
            format_time(s.handle.created),
            s.state,
            for_terminal(s.summary().split(": ", 1)[-1]),
        ]
        for s in statuses
    ]
    return _table(header, rows)


def _state(run: LocalRun) -> str:
    """A run's state, and while it runs, its ninja's pid (which `kill -TERM` stops)."""
    return f"running (pid {run.pid})" if run.running and run.pid is not None else run.state


def local_runs_table(runs: list[LocalRun]) -> list[str]:
    """The run folders ``ninja run`` left here: id, recipe, last activity, state."""
    header = ["RUN", "RECIPE", "LAST ACTIVITY", "STATE"]
    rows = [[r.run_id, r.recipe or "-", format_time(r.modified), _state(r)] for r in runs]
    return _table(header, rows)
