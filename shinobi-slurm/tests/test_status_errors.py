"""``ninja status`` when Slurm cannot be asked, or the handle is damaged: said, and
an exit status a script can test (no cluster needed: stand-ins on PATH)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import Ninja

REFUSING = '#!/bin/sh\necho "sacct: error: Problem talking to the database" >&2\nexit 1\n'


def handle(tmp_path: Path, job_id: str, created: float = 0.0) -> Path:
    path = tmp_path / "handle.json"
    data = {
        "version": 1,
        "engine": "slurm",
        "recipe": "pipe",
        "run_id": "20261130-000000-abcdef",
        "workdir": str(tmp_path),
        "created": created,
        "jobs": [{"step": "make", "job_id": job_id}],
    }
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def unreachable(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sacct", "squeue"):
        (bin_dir / tool).write_text(REFUSING.replace("sacct", tool))
        (bin_dir / tool).chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_a_status_slurm_could_not_give_exits_74(
    ninja: Ninja, tmp_path: Path, unreachable: dict[str, str]
) -> None:
    shown = ninja("status", str(handle(tmp_path, "12")), **unreachable)
    assert shown.returncode == 74, shown.stderr
    assert "could not ask Slurm" in shown.stdout
    assert "Problem talking to the database" in shown.stdout
    # the accounting database, not the controller (`sinfo` would answer fine)
    assert "check that slurmdbd runs (`sacctmgr show cluster` answers)" in shown.stdout


def test_a_job_id_that_is_not_slurms_is_a_damaged_handle(
    ninja: Ninja, tmp_path: Path, unreachable: dict[str, str]
) -> None:
    for command in ("status", "cancel"):
        said = ninja(command, str(handle(tmp_path, "12;x")), **unreachable)
        assert said.returncode == 2, said.stderr
        assert "names '12;x' as a Slurm job id" in said.stderr
        assert "Traceback" not in said.stderr


def stand_ins(tmp_path: Path, sacct: str, squeue: str, scancel: str = "exit 0") -> dict[str, str]:
    """``sacct``, ``squeue`` and ``scancel`` that print and exit as given (shell snippets)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool, body in (("sacct", sacct), ("squeue", squeue), ("scancel", scancel)):
        (bin_dir / tool).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / tool).chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


FORGOTTEN = 'echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1'
AWAY = 'echo "squeue: error: Unable to contact slurm controller (connect failure)" >&2; exit 1'


def test_a_job_slurm_has_forgotten_ends_the_launch_instead_of_running_for_ever(
    ninja: Ninja, tmp_path: Path
) -> None:
    extra = stand_ins(tmp_path, "exit 0", FORGOTTEN)
    old = handle(tmp_path, "12", created=time.time() - 3600)
    shown = ninja("status", str(old), "--watch", "--interval", "0.5", timeout=60, **extra)
    assert shown.returncode == 1, shown.stderr  # it ended: watch returned
    assert "Slurm has no record of this job" in shown.stdout
    fresh = handle(tmp_path, "12", created=time.time())
    shown = ninja("status", str(fresh), **extra)
    assert shown.returncode == 0 and "not in Slurm accounting yet" in shown.stdout


def test_a_controller_that_does_not_answer_is_said_not_swallowed(
    ninja: Ninja, tmp_path: Path
) -> None:
    extra = stand_ins(tmp_path, "exit 0", AWAY)
    shown = ninja("status", str(handle(tmp_path, "12", created=time.time() - 3600)), **extra)
    assert shown.returncode == 74, shown.stderr
    assert "could not ask Slurm's controller" in shown.stdout
    assert "Slurm has no record" not in shown.stdout  # nothing is concluded from silence


def test_a_cancel_the_controller_does_not_take_says_what_to_do(
    ninja: Ninja, tmp_path: Path
) -> None:
    running = "echo '12|12|RUNNING|0:0|2026-11-30T03:47:39|Unknown|None'"
    refused = AWAY.replace("squeue", "scancel")
    extra = stand_ins(tmp_path, running, "exit 0", refused)
    said = ninja("cancel", str(handle(tmp_path, "12", created=time.time())), **extra)
    assert said.returncode == 74, said.stderr  # the machine's problem, as for status
    assert "could not cancel the 1 job(s) of pipe/20261130-000000-abcdef" in said.stderr
    assert (
        "check that slurmctld runs" in said.stderr
        and "scancel --name=shinobi-20261130-000000-abcdef 12" in said.stderr
    )


def test_a_cancel_of_a_launch_that_has_ended_cancels_nothing(ninja: Ninja, tmp_path: Path) -> None:
    """Its ended jobs were handed to scancel and "cancelled 1 Slurm job(s)" said of a
    launch that had long completed; an id Slurm has since reused is another job."""
    done = (
        "echo '12|12|COMPLETED|0:0|2026-12-02T10:00:00|2026-12-02T10:00:05|None|64M|01:00:00"
        "|n1|cpu=1|shinobi-20261130-000000-abcdef'"
    )
    extra = stand_ins(tmp_path, done, "exit 0", f'echo "$@" >> {tmp_path}/scancelled')
    said = ninja("cancel", str(handle(tmp_path, "12", created=time.time())), **extra)
    assert said.returncode == 0, said.stderr
    assert "nothing to cancel: every job of pipe/" in said.stdout, said.stdout
    assert not (tmp_path / "scancelled").exists()


def test_a_cancel_of_another_users_jobs_names_whose_they_are(ninja: Ninja, tmp_path: Path) -> None:
    """It advised running ninja cancel again, or scancel: neither can work for a
    colleague's jobs."""
    running = "echo '12|12|RUNNING|0:0|2026-11-30T03:47:39|Unknown|None'"
    denied = (
        'echo "scancel: error: Kill job error on job id 12: Access/permission denied" >&2; exit 1'
    )
    extra = stand_ins(tmp_path, running, "exit 0", denied)
    said = ninja("cancel", str(handle(tmp_path, "12", created=time.time())), **extra)
    assert said.returncode == 1, said.stderr
    assert "they are root's, not this user's: root (or a Slurm operator) can cancel them" in (
        said.stderr
    )
    assert "again" not in said.stderr


@pytest.mark.parametrize("case", ["no answer", "not installed"])
def test_a_cancel_that_cannot_reach_slurm_at_all_exits_74(
    ninja: Ninja, tmp_path: Path, case: str
) -> None:
    """A scancel that times out, or is not there, is the machine's problem as a refusal is."""
    running = "echo '12|12|RUNNING|0:0|2026-11-30T03:47:39|Unknown|None'"
    extra = stand_ins(tmp_path, running, "exit 0", "sleep 30")
    settings = {"SHINOBI_BACKEND_SLURM_COMMAND_TIMEOUT": "1"}
    if case == "not installed":  # only the stand-ins on PATH, and no scancel among them
        (tmp_path / "bin" / "scancel").unlink()
        settings = {}
        extra["PATH"] = str(tmp_path / "bin")
    said = ninja("cancel", str(handle(tmp_path, "12", created=time.time())), **extra, **settings)
    assert said.returncode == 74, said.stderr
    assert "could not cancel the 1 job(s)" in said.stderr


@pytest.mark.parametrize("recorded", ["None", "BeginTime"])
def test_a_job_held_after_submission_says_why_it_waits(
    ninja: Ninja, tmp_path: Path, recorded: str
) -> None:
    """Accounting keeps the reason a job had when slurmdbd last heard of it: none,
    or the one before a hold (``--begin``, then ``scontrol hold``), so a held job
    read as plainly pending for ever; the queue says it is held."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sacct").write_text(
        f"#!/bin/sh\necho '12|12|PENDING|0:0|Unknown|Unknown|{recorded}|0|1G|01:00:00'\n"
    )
    (bin_dir / "squeue").write_text("#!/bin/sh\necho '12|PENDING|JobHeldUser'\n")
    for tool in ("sacct", "squeue"):
        (bin_dir / tool).chmod(0o755)
    shown = ninja(
        "status",
        str(handle(tmp_path, "12", created=time.time())),
        "--json",
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    )
    (step,) = json.loads(shown.stdout)["steps"]
    assert step["phase"] == "pending"
    assert step["detail"] == "waiting: JobHeldUser: it is held: `scontrol release 12` lets it start"
