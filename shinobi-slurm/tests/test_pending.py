"""A step whose job Slurm will not start says so, instead of showing only "start".

A held job, a drained node or a downed partition used to leave ``ninja run
--backend slurm`` silent for as long as anyone waited. Reasons Slurm will not
clear by itself are said at once; any other reason after ``PENDING_NOTICE``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ninja_argv
from launches import wait_dequeued

from shinobi_slurm import backend
from shinobi_slurm.backend import _Waiting
from shinobi_slurm.sacct import parse_line

RECIPE = """
from shinobi.steps import Cab, Recipe

nap = Cab("nap", ["/bin/sh", "-c", "sleep 600"])
r = Recipe("r")
r.add_step("nap", nap)
"""


def _pending(reason: str):  # type: ignore[no-untyped-def]
    return parse_line(f"7|7|PENDING|0:0|Unknown|Unknown|{reason}")


def test_a_reason_slurm_will_not_clear_is_said_at_once_and_once() -> None:
    said: list[str] = []
    waiting = _Waiting("nap", "7", said.append)
    waiting.saw(_pending("JobHeldUser"))
    waiting.saw(_pending("JobHeldUser"))
    assert len(said) == 1 and "scontrol release 7" in said[0] and "'nap'" in said[0]


def test_ordinary_queueing_is_said_only_after_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    waiting = _Waiting("nap", "7", said.append)
    waiting.saw(_pending("BeginTime"))
    waiting.saw(_pending("Priority"))
    assert said == []
    monkeypatch.setattr(backend, "PENDING_NOTICE", 0.0)
    waiting.saw(_pending("Priority"))
    waiting.saw(_pending("Resources"))
    waiting.saw(_pending("BeginTime"))
    waiting.saw(_pending("Resources"))  # once per reason
    assert len(said) == 3, said
    assert "(Priority): jobs of higher priority are ahead of it" in said[0]
    assert "(Resources): it waits for the cluster to free the CPUs or memory" in said[1]
    assert "(BeginTime): Slurm has not started it" in said[2]


def _lagging_accounting(tmp_path: Path) -> dict[str, str]:
    """A PATH whose sacct answers, but lists no job yet (a busy or just-restarted slurmdbd)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sacct").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "sacct").chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def _stopped(run: subprocess.Popen[bytes], err: Path) -> int:
    """ninja's exit status once it has stopped; killed, and its job cancelled, if it hangs.

    With accounting that never lists the job, ninja sits out the whole ``CANCEL_WAIT``
    (60 s) after its scancel before asking squeue, so the wait is long."""
    try:
        return run.wait(backend.CANCEL_WAIT + 120)
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()
        said = err.read_text()
        if "Slurm job " in said:
            subprocess.run(["scancel", said.split("Slurm job ")[1].split()[0]], check=False)
        raise


def _job_of(folder: Path) -> str | None:
    """The Slurm job of the run's one step, once its ledger names it."""
    for ledger in folder.glob(".shinobi/**/slurm/jobs.tsv"):
        line = ledger.read_text().partition("\n")[0]
        if line:
            return line.split("\t")[0]
    return None


def _interrupted_once_said(
    folder: Path, env: dict[str, str], sbatch_opts: str, act: Callable[[str], bool] | None = None
) -> str:
    """Run the nap recipe with ``sbatch_opts``; once its job exists, ``act`` on it
    until that says it has acted;
    once ninja says the job is held, Ctrl-C it: what it said, after checking that
    it exited 130 and its job left the queue."""
    (folder / "nap.py").write_text(RECIPE)
    (folder / "shinobi.toml").write_text(f"[backend.slurm]\nsbatch_opts = {sbatch_opts}\n")
    err = folder / "stderr.txt"
    with err.open("w") as sink:
        run = subprocess.Popen(
            [*ninja_argv(), "run", "nap.py:r", "--backend", "slurm"],
            cwd=folder,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
        try:
            # said within a second here, but once in a CI run not within 60 s: a
            # controller busy with the suite's earlier jobs answers late
            deadline = time.monotonic() + 180
            while "JobHeldUser" not in err.read_text():
                stage = "before acting on the job" if act is not None else "after acting"
                assert run.poll() is None, err.read_text()
                assert time.monotonic() < deadline, f"{stage}: {err.read_text()}"
                if act is not None and (job := _job_of(folder)) is not None and act(job):
                    act = None
                    # the poller asks at least every 10 s: a minute from here is ninja's
                    deadline = max(deadline, time.monotonic() + 60)
                time.sleep(0.2)
        finally:  # a failure here must not leave ninja and its held job behind
            run.send_signal(signal.SIGINT)
            code = _stopped(run, err)
    assert code == 130
    said = err.read_text()
    job = said.split("Slurm job ")[1].split()[0]
    assert wait_dequeued([job]) == []
    return said


@pytest.mark.usefixtures("slurm")
@pytest.mark.parametrize("accounting", ["answers", "lags"])
def test_a_held_job_is_reported_and_ctrl_c_still_cancels_it(
    tmp_path: Path, env: dict[str, str], accounting: str
) -> None:
    if accounting == "lags":
        env = {**env, **_lagging_accounting(tmp_path)}
    said = _interrupted_once_said(tmp_path, env, '["--hold"]')
    assert "has waited" in said and "scontrol release" in said


@pytest.mark.usefixtures("slurm")
def test_a_job_held_after_its_submission_is_reported(tmp_path: Path, env: dict[str, str]) -> None:
    """Accounting keeps the reason the job had when slurmdbd heard of it (BeginTime,
    or None when the controller sent the record before it judged the job) for as
    long as it waits: the hold shows only in the controller's queue."""

    def hold(job: str) -> bool:
        """Hold the job once accounting lists it waiting (before, ninja asks the queue)."""
        listed = subprocess.run(
            ["sacct", "-X", "-n", "-P", "-j", job, "-o", "State,Reason"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        if not listed.startswith("PENDING|"):
            return False
        time.sleep(2)  # a poll round or two sees the job listed
        subprocess.run(["scontrol", "uhold", job], check=True, capture_output=True)
        return True

    said = _interrupted_once_said(tmp_path, env, '["--begin=now+3600"]', hold)
    assert "(JobHeldUser)" in said and f"scontrol release {_job_of(tmp_path)}" in said
