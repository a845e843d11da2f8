"""A ``ninja run --backend slurm`` killed with ``kill -9`` leaves its job running:
the next run in the workdir refuses to start beside it, until it ends.

The next run started the same step natively beside the job, both wrote its
product, and the run said ok (and cached the mixture): only orphan processes
were looked for. And ``ninja clean --runs`` kept such a run's folder however
long ago its jobs had ended.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import RECIPES, Ninja, ninja_argv

pytestmark = pytest.mark.usefixtures("slurm")


def _killed_after_submitting(tmp_path: Path, env: dict[str, str]) -> tuple[str, str]:
    """Start the sleepy recipe on Slurm and SIGKILL its ninja once the job is listed;
    returns the run id and the job id."""
    argv = [*ninja_argv(), "run", f"{RECIPES}/sleepy.py:sleepy", "--marker", "started"]
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
            ledgers = [p for p in (tmp_path / ".shinobi" / "runs").glob("*/slurm/jobs.tsv")]
            ledgers = [p for p in ledgers if p.read_text().endswith("\n")]
            time.sleep(0.2)
        assert ledgers, "the run submitted no job"
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    job = ledgers[0].read_text().split("\t")[0]
    return ledgers[0].parent.parent.name, job


def _gone(job: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        listed = subprocess.run(
            ["squeue", "-h", "-j", job, "-o", "%T"], capture_output=True, text=True
        ).stdout
        if listed.strip() in ("", "CANCELLED", "COMPLETED"):
            return
        time.sleep(0.5)
    raise AssertionError(f"job {job} still runs")


def test_the_next_run_refuses_beside_a_killed_runs_job_until_it_ends(
    ninja: Ninja, tmp_path: Path, env: dict[str, str]
) -> None:
    run_id, job = _killed_after_submitting(tmp_path, env)
    try:
        refused = ninja("run", f"{RECIPES}/sleepy.py:sleepy", "--marker", "m", "--seconds", "0")
        assert refused.returncode == 74, refused.stderr
        said = refused.stderr.strip()
        assert said == (
            "ninja: error: batch jobs an earlier run started here still run, though its ninja"
            f" is gone (killed?): slurm job {job} of run {run_id} (queued or running); they"
            " may write into this run's outputs: stop them (scancel"
            f" {job}) or wait for them to end, then run again"
        )
        assert not (tmp_path / "m").exists()
        kept = ninja("clean", "--runs")
        assert kept.returncode == 0, kept.stderr
        assert f"slurm job {job} (listed in slurm/jobs.tsv there) still run" in kept.stderr
        assert (tmp_path / ".shinobi" / "runs" / run_id).is_dir()
    finally:
        subprocess.run(["scancel", job], check=False)
    _gone(job)
    done = ninja("run", f"{RECIPES}/sleepy.py:sleepy", "--marker", "m", "--seconds", "0")
    assert done.returncode == 0, done.stderr
    assert os.listdir(tmp_path / ".shinobi" / "live") == []
    # its jobs have ended: once quiet, clean removes the killed run's folder
    folder = tmp_path / ".shinobi" / "runs" / run_id
    then = time.time() - 7200
    for base, _, files in os.walk(folder):
        for path in [base, *(os.path.join(base, name) for name in files)]:
            os.utime(path, (then, then))
    cleaned = ninja("clean", "--runs")
    assert cleaned.returncode == 0, cleaned.stderr
    assert not folder.exists(), cleaned.stderr
