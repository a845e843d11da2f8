"""A launch's job ids are checked against its job name; a relayed SIGQUIT ends the job.

After Slurm reuses job ids (a controller reset, a MaxJobId wrap), a handle's
id may name someone else's job: ``ninja status`` showed it as the launch's
step and ``ninja cancel`` scancelled it. A tool that died of SIGQUIT read
"exited with code 131" (bash ignores the SIGQUIT the job script relayed),
and one that died of SIGSEGV had bash's "slurm_script: line 10: ...
Segmentation fault" line as what it said last.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from conftest import Ninja

from shinobi.launch.handle import LaunchHandle, LaunchJob, write_handle
from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.queue import parse_queue_line
from shinobi_slurm.sacct import parse_line
from shinobi_slurm.sbatch import SIGNAL_RELAY
from shinobi_slurm.states import combine_tasks
from shinobi_slurm.status import _last_line, _step_state

RUN_ID = "20260101-000000-abcdef"


def _line(job_id: str, name: str, state: str = "RUNNING") -> str:
    return f"{job_id}|{job_id}|{state}|0:0|2026-12-02T10:00:00|Unknown|None|64M|01:00:00|n1|cpu=1|{name}"


def test_sacct_s_job_name_is_read_even_with_a_bar_in_it() -> None:
    record = parse_line(_line("7", "a|b"))
    assert record is not None and record.name == "a|b" and record.state == "RUNNING"


def test_the_name_accounting_gives_a_job_just_submitted_is_no_name() -> None:
    record = parse_line(_line("7", "allocation", "PENDING"))  # sacct, a moment after sbatch
    assert record is not None and record.name is None


def test_a_record_of_another_name_is_not_the_launch_s_job() -> None:
    job = LaunchJob("g", job_id="7")
    found = {"7": [parse_line(_line("7", "someone-elses-job"))]}
    state = _step_state(job, found, None, True, f"shinobi-{RUN_ID}")  # type: ignore[arg-type]
    assert state.phase == "cancelled", state
    assert "is now another job ('someone-elses-job'" in (state.detail or "")
    ours = _step_state(job, found, None, False, "someone-elses-job")  # type: ignore[arg-type]
    assert ours.phase == "running"


def test_another_jobs_record_in_accounting_alone_is_no_verdict_on_a_new_launch() -> None:
    """A launch submitted seconds ago, whose job accounting does not list yet (slurmdbd
    lags), only an old job of its id: it was recorded cancelled for good ("now
    another job"), though the job ran. Only the queue, or time, says so."""
    job = LaunchJob("g", job_id="7")
    found = {"7": [parse_line(_line("7", "someone-elses-job", "COMPLETED"))]}
    state = _step_state(job, found, None, False, f"shinobi-{RUN_ID}")  # type: ignore[arg-type]
    assert state.phase == "unknown" and state.detail == "not in Slurm accounting yet", state
    queued = parse_queue_line("7|RUNNING|None|N/A|N/A|someone-elses-job")
    assert queued is not None and queued.from_queue
    state = _step_state(job, {"7": [queued]}, None, False, f"shinobi-{RUN_ID}")
    assert state.phase == "cancelled" and "is now another job" in (state.detail or "")


def test_an_array_s_cancelled_tasks_are_said_beside_the_failed_one() -> None:
    lines = [
        "9_0|90|FAILED|1:0|2026-12-02T10:00:00|2026-12-02T10:00:05|None",
        "9_1|91|CANCELLED by 1000|0:15|2026-12-02T10:00:00|2026-12-02T10:00:06|None",
        "9_2|92|CANCELLED by 1000|0:15|2026-12-02T10:00:00|2026-12-02T10:00:06|None",
    ]
    records = [r for line in lines if (r := parse_line(line)) is not None]
    outcome, counts = combine_tasks(records, 3)
    assert counts == {"failed": 1, "cancelled": 2}
    assert outcome.message == "task 0: exited with code 1 (1 of 3 tasks failed, 2 cancelled)"


def test_a_tool_killed_by_sigquit_ends_its_script_by_sigquit() -> None:
    script = "\n".join(["/bin/sh -c 'kill -s QUIT $$'", *SIGNAL_RELAY])
    done = subprocess.run(["bash", "-c", script], capture_output=True, check=False, timeout=30)
    assert done.returncode == -3, done  # not "exit 131": Slurm then records the signal


def test_bash_s_report_of_a_signal_is_not_the_tool_s_last_line(tmp_path: Path) -> None:
    log = tmp_path / "err"
    log.write_text(
        "tool: reading block 12\n"
        "/var/spool/slurmd/job00336/slurm_script: line 10:  4242 Segmentation fault"
        "      (core dumped) tool --in x\n"
    )
    assert _last_line(str(log)) == "tool: reading block 12"


def test_bash_s_short_report_of_a_signal_is_not_the_tool_s_last_line(tmp_path: Path) -> None:
    """After a SIGTERM the job's bash printed "Terminated", quoted as the tool's words."""
    log = tmp_path / "err"
    log.write_text("about to be stopped\nTerminated\n")
    assert _last_line(str(log)) == "about to be stopped"


def test_a_long_last_line_is_cut_where_every_route_cuts_it_and_marked(tmp_path: Path) -> None:
    """It was cut at 200 characters with no mark: a long path read as whole."""
    log = tmp_path / "err"
    log.write_text("x" * 500 + "\n")
    assert _last_line(str(log)) == "x" * 300 + " [... cut at 300 characters]"


# -- live: someone else's job holding a launch's job id ------------------------------


def _sbatch(name: str) -> str:
    return subprocess.run(
        ["sbatch", "--parsable", "-J", name, "--time=2", "-o", "/dev/null", "--wrap", "sleep 90"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()


def _alive(job_id: str) -> bool:
    said = subprocess.run(
        ["squeue", "-h", "-j", job_id, "-o", "%T"], capture_output=True, text=True, check=False
    )
    return said.stdout.strip() in ("PENDING", "RUNNING", "CONFIGURING")


def _named_in_accounting(job_id: str, name: str) -> None:
    """Wait until sacct has the job's name (it reads "allocation" for a moment)."""
    deadline = time.monotonic() + 120  # slurmdbd may be busy with the suite
    while time.monotonic() < deadline:
        said = subprocess.run(
            ["sacct", "-X", "-P", "-n", "-j", job_id, "-o", "JobName"],
            capture_output=True,
            text=True,
            check=False,
        )
        if said.stdout.strip() == name:
            return
        time.sleep(0.5)
    pytest.fail(f"sacct never named job {job_id} {name!r}")


def _scancel(*job_ids: str) -> None:
    subprocess.run(["scancel", *job_ids], capture_output=True, check=False, timeout=60)


@pytest.mark.usefixtures("slurm")
@pytest.mark.parametrize("age", [0.0, 1000.0])
def test_status_and_cancel_leave_the_job_that_reused_an_id_alone(
    ninja: Ninja, tmp_path: Path, age: float
) -> None:
    theirs = _sbatch("someone-elses-job")
    try:
        handle = LaunchHandle(
            engine="slurm",
            recipe="r",
            run_id=RUN_ID,
            workdir=str(tmp_path),
            created=time.time() - age,
            jobs=[LaunchJob("g", job_id=theirs)],
            extra={"job_name": f"shinobi-{RUN_ID}"},
        )
        path = write_handle(handle)
        _named_in_accounting(theirs, "someone-elses-job")
        status = ninja("status", "--json", str(path))
        steps = json.loads(status.stdout)["steps"]
        assert steps[0]["phase"] == "cancelled", steps
        assert "is now another job ('someone-elses-job'" in steps[0]["detail"], steps
        ninja("cancel", str(path))
        time.sleep(1)
        assert _alive(theirs), "ninja cancel cancelled someone else's job"
    finally:
        _scancel(theirs)


@pytest.mark.usefixtures("slurm")
def test_scancel_with_a_name_cancels_only_the_listed_jobs_of_that_name() -> None:
    theirs, ours = _sbatch("someone-elses-job"), _sbatch(f"shinobi-{RUN_ID}")
    try:
        SlurmCommands().cancel([theirs, ours], f"shinobi-{RUN_ID}")
        deadline = time.monotonic() + 30
        while _alive(ours) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _alive(ours)
        assert _alive(theirs)
    finally:
        _scancel(theirs, ours)


def test_the_failed_line_of_a_run_is_cut_and_marked_too() -> None:
    """``ninja run --backend slurm`` cut its FAILED line at 300 characters, unmarked."""
    from shinobi_slurm.backend import _last_line as failed_line

    assert failed_line("short\n" + "y" * 400 + "\n\n") == "y" * 300 + " [... cut at 300 characters]"
    assert failed_line("whole line\n") == "whole line"
