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


@pytest.mark.usefixtures("slurm")
@pytest.mark.parametrize("accounting", ["answers", "lags"])
def test_a_held_job_is_reported_and_ctrl_c_still_cancels_it(
    tmp_path: Path, env: dict[str, str], accounting: str
) -> None:
    if accounting == "lags":
        env = {**env, **_lagging_accounting(tmp_path)}
    (tmp_path / "nap.py").write_text(RECIPE)
    (tmp_path / "shinobi.toml").write_text('[backend.slurm]\nsbatch_opts = ["--hold"]\n')
    err = tmp_path / "stderr.txt"
    with err.open("w") as sink:
        run = subprocess.Popen(
            [*ninja_argv(), "run", "nap.py:r", "--backend", "slurm"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
        try:
            # said within a second here, but once in a CI run not within 60 s: a
            # controller busy with the suite's earlier jobs answers late
            deadline = time.monotonic() + 180
            while "JobHeldUser" not in err.read_text():
                assert run.poll() is None, err.read_text()
                assert time.monotonic() < deadline, err.read_text()
                time.sleep(0.2)
        finally:  # a failure here must not leave ninja and its held job behind
            run.send_signal(signal.SIGINT)
            code = _stopped(run, err)
    assert code == 130
    said = err.read_text()
    assert "has waited" in said and "scontrol release" in said
    job = said.split("Slurm job ")[1].split()[0]
    assert wait_dequeued([job]) == []
