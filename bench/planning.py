"""Large recipes that run nothing: ``--dryrun``, ``build_graph`` and ``ninja compile``.

Each is measured on a 10,000- and a 100,000-step recipe of two shapes, a
chain (every step waits on the one before) and a fan-out (one root, every
other step waits on it), because per-step costs hide in both: deep
dependency walks in the first, very wide wavefront rows in the second.
Growth is the 100,000-step median over the 10,000-step one; linear is 10.
"""

from __future__ import annotations

from functools import partial
from importlib.metadata import entry_points
from pathlib import Path

import recipes
from figures import Figure, Report
from timing import Samples, bench_env, repeat, run_timed, timed

__all__ = [
    "SHAPES",
    "compile_available",
    "measure_build_graph",
    "measure_compile",
    "measure_dryrun",
]

SHAPES = ("chain", "fanout")


def _target(shape: str, steps: int) -> str:
    return f"{Path(recipes.__file__).resolve()}:{shape}_{steps}"


def _add(report: Report, key: str, label: str, samples: Samples) -> None:
    report.add(Figure.of(key, label, "s", samples))


def _growth(report: Report, key: str, label: str, small: str, large: str) -> None:
    low, high = report.figures.get(small), report.figures.get(large)
    if low is None or high is None or low.value is None or high.value is None:
        report.missing(key, label, "x", "a size was not measured")
        return
    cpu = high.cpu / low.cpu if high.cpu is not None and low.cpu else None
    report.add(Figure(key, label, "x", high.value / low.value, cpu=cpu))


def measure_dryrun(
    report: Report, bindir: Path, sizes: tuple[int, int], reps: int, workdir: Path
) -> None:
    """``ninja run FILE:NAME --dryrun`` through the CLI, output discarded."""
    ninja = str(bindir / "ninja")
    env = bench_env()
    for shape in SHAPES:
        for steps in sizes:
            argv = [ninja, "run", _target(shape, steps), "--dryrun"]
            samples = repeat(reps, partial(run_timed, argv, cwd=workdir, env=env))
            label = f"ninja run --dryrun, {shape} of {steps}"
            _add(report, f"dryrun.{shape}_{steps}", label, samples)
        _growth(
            report,
            f"dryrun.{shape}.growth",
            f"--dryrun growth, {shape} {sizes[1]} / {sizes[0]}",
            f"dryrun.{shape}_{sizes[0]}",
            f"dryrun.{shape}_{sizes[1]}",
        )


def measure_build_graph(report: Report, sizes: tuple[int, int], reps: int) -> None:
    """``build_graph`` in-process, and building the Recipe object itself for reference.

    This runs under Python's default garbage-collector thresholds, as a
    program using shinobi as a library would (``ninja`` raises them), so its
    growth shows what such a program sees; it has no target of its own.
    """
    from shinobi.graph import build_graph

    for shape in SHAPES:
        make = recipes.SHAPES[shape]
        for steps in sizes:
            recipe = make(steps)
            _add(
                report,
                f"recipe.{shape}_{steps}",
                f"building the Recipe object, {shape} of {steps}",
                repeat(reps, partial(timed, make, steps)),
            )
            _add(
                report,
                f"graph.{shape}_{steps}",
                f"build_graph, {shape} of {steps}",
                repeat(reps, partial(timed, build_graph, recipe)),
            )
        _growth(
            report,
            f"graph.{shape}.growth",
            f"build_graph growth, {shape} {sizes[1]} / {sizes[0]}",
            f"graph.{shape}_{sizes[0]}",
            f"graph.{shape}_{sizes[1]}",
        )


def compile_available() -> bool:
    """Whether shinobi-slurm provides the ``slurm`` offload engine in this environment."""
    return any(ep.name == "slurm" for ep in entry_points(group="shinobi.offload"))


def measure_compile(
    report: Report, bindir: Path, sizes: tuple[int, int], reps: int, workdir: Path
) -> None:
    """``ninja compile --engine slurm`` of the same recipes, or why it was not measured."""
    if not compile_available():
        for shape in SHAPES:
            for steps in sizes:
                report.missing(
                    f"compile.{shape}_{steps}",
                    f"ninja compile --engine slurm, {shape} of {steps}",
                    "s",
                    "shinobi-slurm not installed",
                )
            report.missing(
                f"compile.{shape}.growth",
                f"compile growth, {shape} {sizes[1]} / {sizes[0]}",
                "x",
                "shinobi-slurm not installed",
            )
        return
    ninja = str(bindir / "ninja")
    env = bench_env()
    for shape in SHAPES:
        for steps in sizes:
            argv = [ninja, "compile", _target(shape, steps), "--engine", "slurm"]
            samples = repeat(reps, partial(run_timed, argv, cwd=workdir, env=env))
            _add(
                report,
                f"compile.{shape}_{steps}",
                f"ninja compile --engine slurm, {shape} of {steps}",
                samples,
            )
        _growth(
            report,
            f"compile.{shape}.growth",
            f"compile growth, {shape} {sizes[1]} / {sizes[0]}",
            f"compile.{shape}_{sizes[0]}",
            f"compile.{shape}_{sizes[1]}",
        )
