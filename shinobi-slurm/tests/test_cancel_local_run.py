"""``ninja cancel RUN-ID`` of a running ``ninja run --backend slurm`` says how to stop it.

It refused ("names a run made here with `ninja run`, not a launch") without
a word on how to stop the run or its jobs, which go on until stopped.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import RECIPES, Ninja, ninja_argv

pytestmark = pytest.mark.usefixtures("slurm")


def test_cancel_of_a_local_slurm_run_names_ctrl_c_and_scancel(
    ninja: Ninja, tmp_path: Path, env: dict[str, str]
) -> None:
    marker = tmp_path / "started"
    argv = [*ninja_argv(), "run", f"{RECIPES}/sleepy.py:sleepy", "--marker", str(marker)]
    run = subprocess.Popen(
        [*argv, "--backend", "slurm"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        ledgers: list[Path] = []
        while not ledgers and time.monotonic() < deadline:
            ledgers = list((tmp_path / ".shinobi" / "runs").glob("*/slurm/jobs.tsv"))
            time.sleep(0.5)
        assert ledgers, "the run submitted no job"
        run_id = ledgers[0].parent.parent.name
        done = ninja("cancel", run_id)
        assert done.returncode == 2, done.stderr
        said = done.stderr.strip()
        assert "names a run made here with `ninja run`" in said
        assert f"run {run_id} is running: Ctrl-C in the terminal of its `ninja run`" in said
        assert f"`scancel --name shinobi-{run_id}`" in said, said
        assert len(said.splitlines()) == 1
    finally:
        run.send_signal(signal.SIGINT)  # what the message says: it cancels its job
        run.wait(timeout=120)
