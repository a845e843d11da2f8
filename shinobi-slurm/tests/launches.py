"""Helpers for the live launch tests: submit through the CLI, wait for the end, ask sacct."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import Ninja


def submit(ninja: Ninja, target: str, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    """``ninja compile TARGET ARGS --submit --json``; the launch as the CLI printed it."""
    done = ninja("compile", target, *args, "--submit", "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    launch: dict[str, Any] = json.loads(done.stdout)
    return launch


def status(ninja: Ninja, handle: str, cwd: Path | None = None) -> dict[str, Any]:
    done = ninja("status", handle, "--json", cwd=cwd)
    assert done.stdout, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    found["exit"] = done.returncode
    return found


def wait_final(
    ninja: Ninja, handle: str, timeout: float = 400, cwd: Path | None = None
) -> dict[str, Any]:
    """The launch's status once it has finished (completed, failed or cancelled)."""
    deadline = time.monotonic() + timeout
    while True:
        found = status(ninja, handle, cwd)
        if found["state"] in ("completed", "failed", "cancelled"):
            return found
        assert time.monotonic() < deadline, f"launch still {found['state']}: {found['summary']}"
        time.sleep(1.0)


def steps(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["step"]: s for s in found["steps"]}


def sacct_times(job_ids: list[str]) -> dict[str, tuple[str, str]]:
    """(Start, End) of each job as Slurm accounting recorded them."""
    out = subprocess.run(
        ["sacct", "-X", "-P", "-n", "-j", ",".join(job_ids), "-o", "JobID,Start,End"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    times = {}
    for line in out.splitlines():
        job, start, end = line.split("|")
        times[job] = (start, end)
    return times


def queued(job_ids: list[str]) -> list[str]:
    """Which of ``job_ids`` squeue still lists (pending, running or completing)."""
    out = subprocess.run(
        ["squeue", "-h", "-j", ",".join(job_ids), "-o", "%i %T"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return [line for line in out.splitlines() if line.strip()]


def wait_dequeued(job_ids: list[str], timeout: float = 60) -> list[str]:
    """What is still queued once Slurm has had ``timeout`` s to reap cancelled jobs."""
    deadline = time.monotonic() + timeout
    while queued(job_ids) and time.monotonic() < deadline:
        time.sleep(0.5)
    return queued(job_ids)
