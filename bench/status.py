"""Scheduler calls per ``ninja status`` round: constant, whatever the number of jobs.

A status round that asked Slurm once per job would hammer the controller of
a shared cluster for a 1,000-job launch. The suite puts counting stand-ins for
``sacct`` and ``squeue`` first on PATH (see ``slurm_shim.py``), writes a
synthetic launch handle naming N jobs, runs ``ninja status`` once, and counts
the calls for N = 10, 100 and 1,000.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from figures import Report

__all__ = ["JOB_COUNTS", "measure_status_calls"]

JOB_COUNTS = (10, 100, 1000)


def _missing_reason() -> str | None:
    """Why the round cannot be measured in this environment, or None if it can."""
    if importlib.util.find_spec("shinobi_slurm") is None:
        return "shinobi-slurm not installed"
    if importlib.util.find_spec("shinobi.cli.status") is None:
        return "no `ninja status` command in this build yet"
    return "no launch handle format in shinobi.launch yet"


def measure_status_calls(report: Report, bindir: Path, workdir: Path) -> None:
    reason = _missing_reason()
    if reason is not None:
        for jobs in JOB_COUNTS:
            report.missing(
                f"status.calls_{jobs}",
                f"sacct/squeue calls, one status round, {jobs} jobs",
                "calls",
                reason,
            )
        report.missing("status.growth", "status calls growth, 1000 / 10 jobs", "x", reason)
        return
