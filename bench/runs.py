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
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import recipes
from figures import Figure, Report
from timing import CommandFailed, Samples, Timing, bench_env, run_timed, timed

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


def floor_seconds(steps: int, workers: int, cwd: Path) -> Timing:
    """The bare loop: the same commands by ``subprocess.run``, on ``workers`` threads."""
    commands = _commands(steps)

    def spawn(argv: list[str]) -> None:
        subprocess.run(argv, cwd=cwd, check=True)

    def loop() -> None:
        if workers == 1:
            for argv in commands:
                spawn(argv)
        else:
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(spawn, commands))

    return timed(loop)


def _cli(ninja: str, steps: int, workers: int, cwd: Path) -> Timing:
    target = f"{Path(recipes.__file__).resolve()}:touch_{steps}"
    argv = [ninja, "run", target, "--no-cache", "-j", str(workers)]
    return run_timed(argv, cwd=cwd, env=bench_env())


def _inprocess(steps: int, workers: int, cwd: Path) -> Timing:
    from shinobi.runner import run_recipe

    recipe = getattr(recipes, f"touch_{steps}")
    outcome: list[Any] = []

    def run() -> None:
        outcome.append(
            run_recipe(recipe, max_workers=workers, use_cache=False, cwd=cwd, workdir=cwd)
        )

    timing = timed(run)
    if not outcome[0].ok:
        raise CommandFailed(f"run_recipe(touch_{steps}) failed: {outcome[0].error}")
    return timing


def _check_touched(cwd: Path, steps: int) -> None:
    made = sum(1 for p in cwd.iterdir() if p.name.startswith("f"))
    if made != steps:
        raise CommandFailed(f"a {steps}-step run left {made} files in {cwd}, not {steps}")


def _over_floor(runs: Samples, floors: Samples, steps: int) -> tuple[Samples, Samples]:
    """Per repetition: run / floor, and (run - floor) per step in ms; wall and CPU alike."""
    ratios, overheads = Samples(), Samples()
    for run, floor in zip(runs.timings, floors.timings, strict=True):
        ratios.add(Timing(run.wall / floor.wall, run.cpu / floor.cpu))
        overheads.add(
            Timing((run.wall - floor.wall) / steps * 1000, (run.cpu - floor.cpu) / steps * 1000)
        )
    return ratios, overheads


def measure_runs(
    report: Report, bindir: Path, steps: int, workers: int, reps: int, workdir: Path
) -> None:
    ninja = str(bindir / "ninja")
    variants: dict[str, Callable[[Path], Timing]] = {
        "floor": lambda d: floor_seconds(steps, workers, d),
        "cli": lambda d: _cli(ninja, steps, workers, d),
        "inproc": lambda d: _inprocess(steps, workers, d),
    }
    samples = {name: Samples() for name in variants}
    for rep in range(reps + 1):  # the first round warms caches and is not recorded
        for name, measure in variants.items():
            with scratch(workdir) as cwd:
                timing = measure(cwd)
                _check_touched(cwd, steps)
            if rep:
                samples[name].add(timing)

    key = f"run.touch_{steps}.j{workers}"
    floor_label = "bare loop" if workers == 1 else f"bare loop, {workers} threads"
    label = f"{steps} steps, floor ({floor_label})"
    report.add(Figure.of(f"{key}.floor", label, "s", samples["floor"]))
    labels = {"cli": "ninja run (CLI)", "inproc": "run_recipe (in-process)"}
    for name, text in labels.items():
        where = f"{steps} steps, -j {workers}, {text}"
        ratios, overheads = _over_floor(samples[name], samples["floor"], steps)
        report.add(Figure.of(f"{key}.{name}", where, "s", samples[name]))
        report.add(Figure.of(f"{key}.{name}.ratio", f"{where} / floor", "x", ratios))
        report.add(
            Figure.of(f"{key}.{name}.overhead", f"{where}, over floor", "ms/step", overheads)
        )
