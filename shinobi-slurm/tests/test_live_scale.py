"""A 1,000-job launch: ``ninja status`` asks sacct once, whatever the size.

The jobs are submitted held (``--hold`` from sbatch_opts) so they cost the
cluster nothing, and cancelled at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import RECIPES, Ninja
from launches import wait_dequeued

pytestmark = pytest.mark.usefixtures("slurm")


def counting(tmp_path: Path, tools: tuple[str, ...]) -> tuple[dict[str, str], Path]:
    """A PATH on which each of ``tools`` logs its name, then runs the real one."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    for tool in tools:
        real = subprocess.run(
            ["sh", "-c", f"command -v {tool}"], capture_output=True, text=True
        ).stdout.strip()
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\necho {tool} >> {log}\nexec {real} "$@"\n')
        script.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, log


def test_status_of_a_thousand_jobs_is_one_sacct_call(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "shinobi.toml").write_text('[backend.slurm]\nsbatch_opts = ["--hold"]\n')
    done = ninja("compile", f"{RECIPES}/many.py:thousand", "--submit", "--json", timeout=600)
    assert done.returncode == 0, done.stderr
    launch = json.loads(done.stdout)
    ids = [job["job_id"] for job in launch["jobs"]]
    try:
        assert len(ids) == 1000 and all(ids)
        extra, log = counting(tmp_path, ("sacct", "squeue", "scontrol", "sinfo"))
        shown = ninja("status", launch["handle"], "--json", **extra)
        assert shown.stdout, shown.stderr
        found = json.loads(shown.stdout)
        assert len(found["steps"]) == 1000
        assert {s["phase"] for s in found["steps"]} <= {"pending", "unknown"}
        calls = log.read_text().split()
        assert calls.count("sacct") == 1, calls
        assert calls.count("squeue") <= 1 and "scontrol" not in calls, calls

        log.unlink()
        runs = ninja("runs", **extra)
        assert launch["run_id"] in runs.stdout
        assert log.read_text().split().count("sacct") == 1

        log.unlink()
        cancelled = ninja("cancel", launch["run_id"], **extra)
        assert cancelled.returncode == 0, cancelled.stderr
        assert "cancelled 1000 Slurm job(s)" in cancelled.stdout
        assert log.read_text().split().count("sacct") == 1
    finally:
        subprocess.run(["scancel", *ids], capture_output=True, check=False)
    assert wait_dequeued(ids) == []


PRINTS_FOR_A_WHILE = """
from shinobi.steps import Cab, Recipe
talk = Cab("talk", ["sh", "-c", "for i in 1 2 3 4; do echo line $i; sleep 2; done"])
r = Recipe("talker")
r.add_step("talk", talk)
"""


def test_logs_follow_reads_often_but_asks_sacct_only_every_status_interval(
    ninja: Ninja, tmp_path: Path
) -> None:
    (tmp_path / "shinobi.toml").write_text("[backend.slurm]\nstatus_interval = 10\n")
    (tmp_path / "talker.py").write_text(PRINTS_FOR_A_WHILE)
    done = ninja("compile", "talker.py:r", "--submit", "--json")
    assert done.returncode == 0, done.stderr
    launch = json.loads(done.stdout)
    extra, log = counting(tmp_path, ("sacct", "squeue"))
    started = time.monotonic()
    followed = ninja("logs", launch["run_id"], "--follow", timeout=200, **extra)
    elapsed = time.monotonic() - started
    assert followed.returncode == 0, followed.stderr
    assert "line 4" in followed.stdout
    # about 8 s of job: one question at the start, then one per 10 s (not one every 2 s);
    # a job that starts late, or accounting slow to record its end, adds a round
    calls = log.read_text().split().count("sacct")
    assert calls <= 2 + int(elapsed // 10), (calls, elapsed, log.read_text())
