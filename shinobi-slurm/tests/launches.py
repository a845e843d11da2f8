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


UNFINISHED = frozenset({"PENDING", "RUNNING", "COMPLETING", "REQUEUED", "SUSPENDED", "RESIZING"})


def accounted(job_ids: list[str], fields: str, timeout: float = 60) -> dict[str, list[str]]:
    """``fields`` of each job as Slurm accounting recorded them, once every job is final.

    slurmdbd learns of a job's end a moment after squeue stops listing it: right after
    the job leaves the queue sacct may still say RUNNING, with End "Unknown"."""
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run(
            ["sacct", "-X", "-P", "-n", "-j", ",".join(job_ids), "-o", f"JobID,State,{fields}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        rows = {}
        for line in out.splitlines():
            job, state, *rest = line.split("|")
            rows[job] = [state.split()[0], *rest]
        final = len(rows) == len(job_ids) and not UNFINISHED & {r[0] for r in rows.values()}
        if final or time.monotonic() >= deadline:
            return rows
        time.sleep(0.5)


def sacct_states(job_ids: list[str]) -> list[str]:
    """Each job's final State, in the order of ``job_ids``."""
    rows = accounted(job_ids, "JobName")
    return [rows[job][0] if job in rows else "MISSING" for job in job_ids]


def sacct_times(job_ids: list[str]) -> dict[str, tuple[str, str]]:
    """(Start, End) of each job as Slurm accounting recorded them."""
    return {job: (row[1], row[2]) for job, row in accounted(job_ids, "Start,End").items()}


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
