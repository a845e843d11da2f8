"""Real runs of trivial steps, against the floor of spawning the same commands bare.

A ``touch_N`` recipe runs N ``/bin/touch`` steps; the floor is a plain Python
loop running exactly those N commands with ``subprocess.run`` (two threads of
it for ``max_workers`` 2). Whatever a run costs above its floor is shinobi's
own work: scheduling, building invocations, log files, results.

Each repetition measures the floor, the ``ninja run`` CLI and ``run_recipe``
in-process back to back, each in a fresh directory, and the ratios are taken
per repetition: on a shared machine the load drifts, and a floor measured a
minute apart from its run would blur the comparison.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import recipes
from figures import Figure, Report
from timing import CommandFailed, bench_env, run_timed

__all__ = ["floor_seconds", "measure_runs", "scratch"]


@contextmanager
def scratch(parent: Path) -> Iterator[Path]:
    """A fresh empty directory under ``parent``, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="run-", dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _commands(steps: int) -> list[list[str]]:
    return [[str(recipes.touch.command[0]), recipes.file_name(i)] for i in range(steps)]


def floor_seconds(steps: int, workers: int, cwd: Path) -> float:
    """The bare loop: the same commands by ``subprocess.run``, on ``workers`` threads."""
    commands = _commands(steps)

    def spawn(argv: list[str]) -> None:
        subprocess.run(argv, cwd=cwd, check=True)

    started = time.perf_counter()
    if workers == 1:
        for argv in commands:
            spawn(argv)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(spawn, commands))
    return time.perf_counter() - started


def _cli_seconds(ninja: str, steps: int, workers: int, cwd: Path) -> float:
    target = f"{Path(recipes.__file__).resolve()}:touch_{steps}"
    argv = [ninja, "run", target, "--no-cache", "-j", str(workers)]
    return run_timed(argv, cwd=cwd, env=bench_env())


def _inprocess_seconds(steps: int, workers: int, cwd: Path) -> float:
    from shinobi.runner import run_recipe

    recipe = getattr(recipes, f"touch_{steps}")
    started = time.perf_counter()
    result = run_recipe(recipe, max_workers=workers, use_cache=False, cwd=cwd, workdir=cwd)
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise CommandFailed(f"run_recipe(touch_{steps}) failed: {result.error}")
    return elapsed


def _check_touched(cwd: Path, steps: int) -> None:
    made = sum(1 for p in cwd.iterdir() if p.name.startswith("f"))
    if made != steps:
        raise CommandFailed(f"a {steps}-step run left {made} files in {cwd}, not {steps}")


def measure_runs(
    report: Report, bindir: Path, steps: int, workers: int, reps: int, workdir: Path
) -> None:
    ninja = str(bindir / "ninja")
    variants: dict[str, Callable[[Path], float]] = {
        "floor": lambda d: floor_seconds(steps, workers, d),
        "cli": lambda d: _cli_seconds(ninja, steps, workers, d),
        "inproc": lambda d: _inprocess_seconds(steps, workers, d),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for rep in range(reps + 1):  # the first round warms caches and is not recorded
        for name, measure in variants.items():
            with scratch(workdir) as cwd:
                seconds = measure(cwd)
                _check_touched(cwd, steps)
            if rep:
                samples[name].append(seconds)

    key = f"run.touch_{steps}.j{workers}"
    floor_label = "bare loop" if workers == 1 else f"bare loop, {workers} threads"
    report.add(
        Figure(
            f"{key}.floor",
            f"{steps} steps, floor ({floor_label})",
            "s",
            statistics.median(samples["floor"]),
            samples["floor"],
        )
    )
    labels = {"cli": "ninja run (CLI)", "inproc": "run_recipe (in-process)"}
    for name, label in labels.items():
        runs, floors = samples[name], samples["floor"]
        ratios = [r / f for r, f in zip(runs, floors, strict=True)]
        overheads = [(r - f) / steps * 1000 for r, f in zip(runs, floors, strict=True)]
        where = f"{steps} steps, -j {workers}, {label}"
        report.add(Figure(f"{key}.{name}", where, "s", statistics.median(runs), runs))
        ratio = statistics.median(ratios)
        report.add(Figure(f"{key}.{name}.ratio", f"{where} / floor", "x", ratio, ratios))
        report.add(
            Figure(
                f"{key}.{name}.overhead",
                f"{where}, overhead over floor",
                "ms/step",
                statistics.median(overheads),
                overheads,
            )
        )
