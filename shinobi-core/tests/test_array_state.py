"""A job array's state column says what its count is.

It read "failed (2/3 tasks)" when 2 of 3 tasks had succeeded (the engine
column said "array COMPLETED:2,FAILED:1"), and "failed (0/3 tasks)" after a
cancel, saying nothing of the cancelled ones.
"""

from __future__ import annotations

from shinobi.launch.handle import LaunchHandle, LaunchJob
from shinobi.launch.render import status_lines
from shinobi.launch.tracking import LaunchStatus, StepState


def _row(tasks: dict[str, int]) -> str:
    handle = LaunchHandle(engine="slurm", recipe="r", run_id="1", workdir="/w")
    handle.jobs = [LaunchJob("w", job_id="9", tasks=sum(tasks.values()))]
    step = StepState("w", "failed", "task 2: exited with code 1", job_id="9", tasks=tasks)
    return next(
        line for line in status_lines(LaunchStatus(handle, [step])) if line.startswith("w ")
    )


def test_the_count_is_of_the_tasks_done() -> None:
    assert "failed (2 of 3 tasks done)" in _row({"completed": 2, "failed": 1})


def test_cancelled_tasks_are_counted_apart() -> None:
    assert "failed (0 of 3 tasks done, 2 cancelled)" in _row({"failed": 1, "cancelled": 2})
