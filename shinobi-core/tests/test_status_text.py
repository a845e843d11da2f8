"""``ninja status`` shows what a scheduler or a tool said without its escape codes.

A step's detail (a tool's last words, a scheduler's reason) and the
summary line (the scheduler's own error) were printed as they came: an
escape code in them recoloured or cleared the user's terminal.
"""

from __future__ import annotations

from shinobi.launch.handle import LaunchHandle, LaunchJob
from shinobi.launch.render import runs_table, status_lines
from shinobi.launch.tracking import LaunchStatus, StepState


def _status() -> LaunchStatus:
    handle = LaunchHandle(engine="slurm", recipe="r", run_id="1", workdir="/w")
    handle.jobs = [LaunchJob("w", job_id="9")]
    step = StepState("w", "failed", "exited with code 1: \x1b[31mboom\x1b[0m", job_id="9")
    return LaunchStatus(handle, [step], error="sacct: \x1b[2Jerror: no \x1b[1mcontroller")


def test_the_status_table_carries_no_escape_code() -> None:
    lines = status_lines(_status())
    assert not any("\x1b" in line for line in lines), lines
    assert any("boom" in line for line in lines) and any("controller" in line for line in lines)


def test_the_runs_table_carries_no_escape_code() -> None:
    lines = runs_table([_status()])
    assert not any("\x1b" in line for line in lines), lines
