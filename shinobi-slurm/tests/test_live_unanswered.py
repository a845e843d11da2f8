"""A submission Slurm took but did not answer in time leaves no job running unseen.

A slurmctld too busy to reply within ``command_timeout`` may still create the
job: its tool ran while ninja said nothing was submitted (and ran again, beside
it, when the user did as told and submitted again). A compile cancels such a
job; a step of a run adopts it and waits for it, as if Slurm had answered.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import RECIPES, Ninja

pytestmark = pytest.mark.usefixtures("slurm")


def _late_sbatch(tmp_path: Path) -> dict[str, str]:
    """PATH with an sbatch that submits, then answers only after ninja has given up."""
    bin_dir = tmp_path / "late-bin"
    bin_dir.mkdir()
    real = subprocess.run(["sh", "-c", "command -v sbatch"], capture_output=True, text=True).stdout
    script = bin_dir / "sbatch"
    script.write_text(
        f'#!/bin/sh\n{real.strip()} "$@"; rc=$?\n'
        'case " $* " in *--test-only*) exit "$rc" ;; esac\nsleep 60\nexit "$rc"\n'
    )
    script.chmod(0o755)
    # The timeout holds for every Slurm command ninja runs (the trial submission, squeue,
    # scancel): short enough to give up on the late sbatch, long enough for a controller
    # busy with the rest of the suite to answer the others.
    (tmp_path / "shinobi.toml").write_text("[backend.slurm]\ncommand_timeout = 15\n")
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def _queued_from(directory: Path, timeout: float = 30) -> list[str]:
    """Jobs still queued that run in ``directory``, once Slurm had ``timeout`` s to reap them."""

    def listed() -> list[str]:
        out = subprocess.run(
            ["squeue", "-h", "-o", "%i|%Z"], capture_output=True, text=True, check=False
        ).stdout
        return [
            job
            for job, _, cwd in (line.partition("|") for line in out.split())
            if cwd == str(directory)
        ]

    deadline = time.monotonic() + timeout
    while listed() and time.monotonic() < deadline:
        time.sleep(0.5)
    left = listed()
    if left:
        subprocess.run(["scancel", *left], check=False)
    return left


def test_compile_cancels_a_job_whose_submission_was_not_answered(
    ninja: Ninja, tmp_path: Path
) -> None:
    path = _late_sbatch(tmp_path)
    done = ninja("compile", f"{RECIPES}/sleepy.py:sleepy", "--marker", "m", "--submit", **path)
    left = _queued_from(tmp_path)
    assert done.returncode == 74, done.stderr
    assert "Traceback" not in done.stderr and "nothing was submitted" not in done.stderr
    assert re.search(
        r"every job named shinobi-\S+ was cancelled: check that slurmctld", done.stderr
    )
    assert left == [], "a job ninja never learned the id of was left running"


def test_a_step_whose_submission_was_answered_late_waits_for_its_job(
    ninja: Ninja, tmp_path: Path
) -> None:
    """It was failed and its job cancelled, though Slurm had taken it: a controller
    stalled for half a minute failed a run that ``submit_retry`` promised to ride out."""
    path = _late_sbatch(tmp_path)
    done = ninja(
        "run",
        f"{RECIPES}/sleepy.py:sleepy",
        "--marker",
        "m",
        "--seconds",
        "25",  # still running when ninja, given up on sbatch at 15 s, asks the queue
        "--backend",
        "slurm",
        **path,
    )
    left = _queued_from(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Slurm answered the submission of step 'sleep' late" in done.stderr, done.stderr
    assert "the step waits for that job" in done.stderr
    assert (tmp_path / "m").exists()  # the job ran, once
    assert left == [], "the step's job ran on unseen"
