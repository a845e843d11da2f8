"""A fully cached re-run: every step of a 1,000-step recipe served from the step cache.

This is the cost of "nothing changed, run it again", which users pay often
and expect to be instant. The first run fills a private cache directory
(``SHINOBI_CACHE_DIR``); the measured re-runs must then take every step from
it. If they do not (no step cache in this build yet, or a step that is not
cacheable), the figure is reported as not measured, with the count, rather
than timing a run that re-executed its steps.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import recipes
from figures import Figure, Report
from runs import scratch
from timing import CommandFailed, Samples, Timing, bench_env, cpu_seconds, run_timed

__all__ = ["measure_cached_rerun"]


def _cli(ninja: str, steps: int) -> list[str]:
    return [ninja, "run", f"{Path(recipes.__file__).resolve()}:touch_{steps}", "-j", "1"]


def _cached_count_cli(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    proc = subprocess.run(
        [*argv, "--json"], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise CommandFailed(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr[-300:]}")
    data: dict[str, Any] = json.loads(proc.stdout)
    return sum(1 for step in data.get("steps", []) if step.get("status") == "cached")


def _inprocess(steps: int, cwd: Path, cache_dir: Path) -> tuple[Timing, int]:
    from shinobi.runner import run_recipe

    recipe = getattr(recipes, f"touch_{steps}")
    previous = os.environ.get("SHINOBI_CACHE_DIR")
    os.environ["SHINOBI_CACHE_DIR"] = str(cache_dir)
    try:
        cpu, started = cpu_seconds(), time.perf_counter()
        result = run_recipe(recipe, max_workers=1, use_cache=True, cwd=cwd, workdir=cwd)
        elapsed = Timing(time.perf_counter() - started, cpu_seconds() - cpu)
    finally:
        if previous is None:
            os.environ.pop("SHINOBI_CACHE_DIR", None)
        else:
            os.environ["SHINOBI_CACHE_DIR"] = previous
    if not result.ok:
        raise CommandFailed(f"run_recipe(touch_{steps}) failed: {result.error}")
    return elapsed, sum(1 for s in result.steps if s.status == "cached")


def measure_cached_rerun(
    report: Report, bindir: Path, steps: int, reps: int, workdir: Path
) -> None:
    ninja = str(bindir / "ninja")
    cli_key, cli_label = f"cache.touch_{steps}.cli", f"{steps} steps, fully cached re-run (CLI)"
    in_key = f"cache.touch_{steps}.inproc"
    in_label = f"{steps} steps, fully cached re-run (in-process)"
    cwd = scratch(workdir)
    cache_dir = cwd / "cache"
    env = bench_env({"SHINOBI_CACHE_DIR": str(cache_dir)})
    argv = _cli(ninja, steps)
    run_timed(argv, cwd=cwd, env=env)  # fills the cache
    served = _cached_count_cli(argv, cwd, env)
    if served < steps:
        reason = (
            f"the step cache served {served} of {steps} steps on a re-run"
            " (no step cache in this build yet?)"
        )
        report.missing(cli_key, cli_label, "s", reason)
        report.missing(in_key, in_label, "s", reason)
        return
    cli = Samples()
    for _ in range(reps):
        cli.add(run_timed(argv, cwd=cwd, env=env))
    report.add(Figure.of(cli_key, cli_label, "s", cli))
    inproc = Samples()
    for _ in range(reps):
        elapsed, served = _inprocess(steps, cwd, cache_dir)
        if served < steps:
            report.missing(in_key, in_label, "s", f"in-process re-run served {served} of {steps}")
            return
        inproc.add(elapsed)
    report.add(Figure.of(in_key, in_label, "s", inproc))
