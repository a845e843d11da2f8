"""Scheduler calls per ``ninja status`` round: constant, whatever the number of jobs.

A status round that asked Slurm once per job would hammer the controller of
a shared cluster for a 1,000-job launch. The suite puts counting stand-ins for
``sacct`` and ``squeue`` first on PATH (see ``slurm_shim.py``), writes a
synthetic launch handle naming N jobs with core's own handle writer (so the
format is always the one ``ninja status`` reads), runs ``ninja status`` once,
and counts the calls for N = 10, 100, 1,000 and 20,000.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import slurm_shim
from figures import Figure, Report
from timing import CommandFailed, bench_env

__all__ = ["JOB_COUNTS", "measure_status_calls"]

JOB_COUNTS = (10, 100, 1000, 20_000)
#: The sizes the target compares (the issue's 1,000-job launch against 10 jobs).
#: Past some 10,000 jobs a round makes one call more per 10,000: a single ``-j``
#: list of job ids would pass the kernel's 128 KiB limit for one argument.
JUDGED = (10, 1000)
_FIRST_JOB = 500_000


def _missing_reason() -> str | None:
    """Why the round cannot be measured in this environment, or None if it can."""
    from importlib.metadata import entry_points

    if not any(ep.name == "slurm" for ep in entry_points(group="shinobi.offload")):
        return "shinobi-slurm not installed"
    for module in ("shinobi.cli.status", "shinobi.launch.handle"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not in this build"
    return None


def _job_name(jobs: int) -> str:
    """The name the launch of ``jobs`` jobs gives them (and the stand-in answers with:
    ``ninja status`` takes a job of another name for an id Slurm has reused)."""
    return f"shinobi-bench-{jobs}"


def _write_handle(workdir: Path, jobs: int) -> tuple[Path, list[str]]:
    """A submitted Slurm launch of ``jobs`` one-job steps, as ``ninja compile --submit`` leaves."""
    from shinobi.launch.handle import LaunchHandle, LaunchJob, write_handle

    ids = [str(_FIRST_JOB + i) for i in range(jobs)]
    run_id = f"bench-{jobs}"
    handle = LaunchHandle(
        engine="slurm",
        recipe=f"touch_{jobs}",
        run_id=run_id,
        workdir=str(workdir),
        cwd=str(workdir),
        jobs=[
            LaunchJob(
                step=f"s{i:06d}",
                job_id=job_id,
                stdout=str(workdir / "logs" / f"s{i:06d}.out"),
                stderr=str(workdir / "logs" / f"s{i:06d}.err"),
            )
            for i, job_id in enumerate(ids)
        ],
        extra={"job_name": _job_name(jobs)},
    )
    return write_handle(handle), ids


def _calls_in_one_round(bindir: Path, workdir: Path, jobs: int) -> list[str]:
    """The tools one ``ninja status`` round ran, in order (``sacct``, ``squeue``)."""
    shim = workdir / "shim"
    slurm_shim.install(shim)
    log, listing = workdir / f"calls-{jobs}.log", workdir / f"jobs-{jobs}.txt"
    handle, ids = _write_handle(workdir / f"launch-{jobs}", jobs)
    listing.write_text("\n".join(ids) + "\n")
    log.write_text("")
    env = bench_env(
        {
            "BENCH_SHIM_LOG": str(log),
            "BENCH_SHIM_JOBS": str(listing),
            "BENCH_SHIM_JOB_NAME": _job_name(jobs),
        }
    )
    env["PATH"] = f"{shim}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        [str(bindir / "ninja"), "status", str(handle), "--json"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise CommandFailed(f"ninja status exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    state: dict[str, Any] = json.loads(proc.stdout)
    if state.get("state") != "completed":
        raise CommandFailed(
            f"ninja status did not read the stand-in sacct's answer as {jobs} completed jobs"
            f" (state {state.get('state')!r}); the shim no longer matches what shinobi-slurm asks"
        )
    return [line.split()[0] for line in log.read_text().splitlines() if line.strip()]


def measure_status_calls(report: Report, bindir: Path, workdir: Path) -> None:
    reason = _missing_reason()
    labels = {jobs: f"sacct/squeue calls, one status round, {jobs} jobs" for jobs in JOB_COUNTS}
    growth_label = f"status calls growth, {JUDGED[1]} / {JUDGED[0]} jobs"
    if reason is not None:
        for jobs in JOB_COUNTS:
            report.missing(f"status.calls_{jobs}", labels[jobs], "calls", reason)
        report.missing("status.growth", growth_label, "x", reason)
        return
    calls = {jobs: _calls_in_one_round(bindir, workdir, jobs) for jobs in JOB_COUNTS}
    for jobs, tools in calls.items():
        note = ", ".join(f"{tool} x{tools.count(tool)}" for tool in sorted(set(tools)))
        figure = Figure(f"status.calls_{jobs}", labels[jobs], "calls", float(len(tools)), note=note)
        report.add(figure)
    smallest, largest = len(calls[JUDGED[0]]), len(calls[JUDGED[1]])
    report.add(Figure("status.growth", growth_label, "x", largest / max(smallest, 1)))
