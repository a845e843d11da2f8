"""Real runs of trivial steps, against the floor of spawning the same commands bare.

A ``touch_N`` recipe runs N ``/bin/touch`` steps; the floor is a plain Python
loop running exactly those N commands with ``subprocess.run`` (two threads of
it for ``max_workers`` 2). Whatever a run costs above its floor is shinobi's
own work: scheduling, building invocations, log files, results.

Each repetition measures the floor, the ``ninja run`` CLI and ``run_recipe``
in-process back to back, each in a fresh directory, and the ratios are taken
per repetition: on a shared machine the load drifts, and a floor measured a
minute apart from its run would blur the comparison.

The floor, the CLI and ``run_recipe`` are measured once more in a directory
where the files are already there, as reference figures: what a run costs
above its floor without the disk's cost of creating files, which on this
machine swings with what was deleted lately (see :func:`_on_existing_files`;
for the same reason no scratch directory is removed before the suite ends).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import chdir
from pathlib import Path
from typing import Any

import recipes
from figures import Figure, Report
from timing import CACHE_DISABLED, CommandFailed, Samples, Timing, bench_env, run_timed, timed

__all__ = [
    "floor_seconds",
    "measure_own_work",
    "measure_runs",
    "scratch",
]


def scratch(parent: Path) -> Path:
    """A fresh empty directory under ``parent``, left there until the suite ends.

    The suite removes its whole folder once everything is measured. Removing
    each directory as soon as it was measured slowed the next measurement: on
    a disk like this machine's (ext4 without a journal) every file created
    skips the inodes freed in the last minutes, so the thousand files one
    variant left behind made each file of the next one dearer, up to doubling
    the floor, and the runs' figures depended on what ran just before them.
    """
    return Path(tempfile.mkdtemp(prefix="run-", dir=parent))


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


def _cli(ninja: str, steps: int, workers: int, cwd: Path, cache: bool = False) -> Timing:
    """``ninja run``: with the step cache disabled (the targets' figure: the floor keeps
    no cache), or on, as by default, into a fresh cache each time (every step stores).

    Disabled, not ``--no-cache``: that runs every step and stores each result.
    """
    target = f"{Path(recipes.__file__).resolve()}:touch_{steps}"
    argv = [ninja, "run", target, "-j", str(workers)]
    if cache:
        env = bench_env({"SHINOBI_CACHE_DIR": str(cwd / ".cache")})
    else:
        env = bench_env(CACHE_DISABLED)
    return run_timed(argv, cwd=cwd, env=env)


def _inprocess(steps: int, workers: int, cwd: Path) -> Timing:
    """``run_recipe`` as a script calls it: from the directory the run works in.

    (A run in another directory than the process's own starts its steps
    through Popen, which can change directory in the child; see
    ``shinobi.backends.spawn``.)
    """
    from shinobi.runner import run_recipe

    recipe = getattr(recipes, f"touch_{steps}")
    outcome: list[Any] = []

    def run() -> None:
        outcome.append(run_recipe(recipe, max_workers=workers, use_cache=False, workdir=cwd))

    with chdir(cwd):
        timing = timed(run)
    if not outcome[0].ok:
        raise CommandFailed(f"run_recipe(touch_{steps}) failed: {outcome[0].error}")
    return timing


def _log_files(cwd: Path, steps: int) -> Timing:
    """Creating two empty files per step where a run keeps its logs, and nothing else.

    This is what a stdout and a stderr log file for every step would cost on
    this disk; ninja creates a step's log only once the step printed something,
    so the touch runs here create none. File creation on a shared disk swings
    with what else is writing to it, so it is measured in every repetition.
    """
    logs = cwd / ".shinobi" / "runs" / "probe" / "logs"
    logs.mkdir(parents=True)

    def create() -> None:
        for i in range(steps):
            for stream in ("out", "err"):
                path = logs / f"{recipes.file_name(i)}.{stream}"
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))

    return timed(create)


def _on_existing_files(steps: int, measure: Callable[[Path], Timing]) -> Callable[[Path], Timing]:
    """``measure`` in a directory where the files the steps touch are already there.

    Then ``/bin/touch`` only stamps a file: no inode is allocated and the
    directory is not locked for a create. On this machine's root disk (ext4
    without a journal) creating a file first skips every inode deleted in the
    last minutes, and two tools creating files in one directory spin on its
    lock; how long that takes depends on what was deleted lately (a test
    suite run just before, say; the suite itself deletes nothing until it
    ends, see :func:`scratch`). Measured this way, the floor is the spawning
    alone, and what a run costs above it is shinobi's without the disk's
    noise. Reference figures, without a target.
    """

    def measured(cwd: Path) -> Timing:
        for i in range(steps):
            os.close(os.open(cwd / recipes.file_name(i), os.O_WRONLY | os.O_CREAT, 0o644))
        return measure(cwd)

    return measured


def _check_touched(cwd: Path, steps: int) -> None:
    made = sum(1 for p in cwd.iterdir() if p.name.startswith("f"))
    if made != steps:
        raise CommandFailed(f"a {steps}-step run left {made} files in {cwd}, not {steps}")


def _add_over_floor(
    report: Report, key: str, where: str, runs: Samples, floors: Samples, steps: int
) -> Figure:
    """Report ``runs`` against their floors, repetition by repetition, as ``KEY.ratio``
    (run / floor) and ``KEY.overhead`` ((run - floor) per step, in ms), wall and CPU
    alike; returns the ratio's figure."""
    ratios, overheads = Samples(), Samples()
    for run, floor in zip(runs.timings, floors.timings, strict=True):
        ratios.add(Timing(run.wall / floor.wall, run.cpu / floor.cpu))
        overheads.add(
            Timing((run.wall - floor.wall) / steps * 1000, (run.cpu - floor.cpu) / steps * 1000)
        )
    ratio = report.add(Figure.of(f"{key}.ratio", f"{where} / floor", "x", ratios))
    report.add(Figure.of(f"{key}.overhead", f"{where}, over floor", "ms/step", overheads))
    return ratio


#: The variants measured again with their files already there (see :func:`_on_existing_files`).
_ON_EXISTING_FILES = ("floor", "cli", "inproc")

#: The variants measured inside this process, whose own CPU time (all its threads,
#: none of the tools they wait for) says what each spends per step beside the
#: tool: the spawning, capturing and bookkeeping a run's wall time hides in the
#: tools' start-up. Reference figures, without a target.
_IN_THIS_PROCESS = {"floor": "floor (bare loop)", "inproc": "run_recipe"}


def measure_runs(
    report: Report, bindir: Path, steps: int, workers: int, reps: int, workdir: Path
) -> None:
    ninja = str(bindir / "ninja")
    # name: (how it is measured, how many files it must leave)
    variants: dict[str, tuple[Callable[[Path], Timing], int]] = {
        "floor": (lambda d: floor_seconds(steps, workers, d), steps),
        "cli": (lambda d: _cli(ninja, steps, workers, d), steps),
        "inproc": (lambda d: _inprocess(steps, workers, d), steps),
        "cli_one": (lambda d: _cli(ninja, 1, workers, d), 1),
        "cli_cache": (lambda d: _cli(ninja, steps, workers, d, cache=True), steps),
    }
    for name in _ON_EXISTING_FILES:
        variants[f"{name}_existing"] = (_on_existing_files(steps, variants[name][0]), steps)
    samples = {name: Samples() for name in variants}
    #: what the floor's loop and run_recipe spent themselves, their tools not counted
    own_cpu = {name: Samples() for name in _IN_THIS_PROCESS}
    logs = Samples()
    for rep in range(reps + 1):  # the first round warms caches and is not recorded
        for name, (measure, files) in variants.items():
            cwd = scratch(workdir)
            own = time.process_time()
            timing = measure(cwd)
            own = (time.process_time() - own) / steps * 1000
            _check_touched(cwd, files)
            if rep:
                samples[name].add(timing)
                if name in own_cpu:
                    own_cpu[name].add(Timing(own, own))
        timing = _log_files(scratch(workdir), steps)
        if rep:
            logs.add(Timing(timing.wall / steps * 1000, timing.cpu / steps * 1000))

    key = f"run.touch_{steps}.j{workers}"
    floor_label = "bare loop" if workers == 1 else f"bare loop, {workers} threads"
    label = f"{steps} steps, floor ({floor_label})"
    report.add(Figure.of(f"{key}.floor", label, "s", samples["floor"]))
    label = f"{steps} steps: 2 empty files per step here (what eager logs would cost)"
    report.add(Figure.of(f"{key}.log_files", label, "ms/step", logs))
    labels = {
        "cli": "ninja run, cache disabled (CLI)",
        "inproc": "run_recipe, cache disabled (in-process)",
        "cli_cache": "ninja run (CLI), cache on: every step stored (no target)",
    }
    floor = samples["floor"]
    for name, text in labels.items():
        where = f"{steps} steps, -j {workers}, {text}"
        report.add(Figure.of(f"{key}.{name}", where, "s", samples[name]))
        ratio = _add_over_floor(report, f"{key}.{name}", where, samples[name], floor, steps)
        # One at a time, a run spawns the same commands as the bare loop, the
        # same way (vfork and exec), and does its own work besides: below 1,
        # something slowed the loop. Two at once it can honestly win: the loop's
        # threads fork through subprocess and contend for the interpreter,
        # posix_spawn holds it for less (run_recipe measured 0.92 x at -j 2).
        below = sum(1 for wall in ratio.samples if wall < 1)
        if below and workers == 1:
            ratio.note = f"{below} sample(s) below 1: a disturbed floor; measure again"
    existing = samples["floor_existing"]
    label = f"{steps} steps, floor ({floor_label}), files already there (reference)"
    report.add(Figure.of(f"{key}.existing.floor", label, "s", existing))
    for name in _ON_EXISTING_FILES:
        if name != "floor":
            where = f"{steps} steps, -j {workers}, {labels[name]}, files already there"
            runs = samples[f"{name}_existing"]
            _add_over_floor(report, f"{key}.existing.{name}", where, runs, existing, steps)
    for name, text in _IN_THIS_PROCESS.items():
        label = f"{steps} steps, -j {workers}, {text}: its own CPU per step, its tools' not counted"
        report.add(Figure.of(f"{key}.{name}.own_cpu", label, "ms/step", own_cpu[name]))
    label = f"one-step ninja run, -j {workers}, beside the {steps}-step runs"
    report.add(Figure.of(f"{key}.cli_one", label, "s", samples["cli_one"]))
    where = f"{steps} steps, -j {workers}, ninja run less a one-step ninja run"
    past_startup = _past_startup(samples["cli"], samples["cli_one"])
    _add_over_floor(report, f"{key}.cli.past_startup", where, past_startup, floor, steps)


def _past_startup(runs: Samples, one_step: Samples) -> Samples:
    """Per repetition, a CLI run less the one-step CLI run measured beside it.

    What is left is what the steps themselves cost through the command line,
    without the start-up every ``ninja run`` pays once (the interpreter, click,
    pydantic, the recipe's import); against the floor it says whether the CLI
    spends more per step than ``run_recipe`` does.
    """
    left = Samples()
    for run, one in zip(runs.timings, one_step.timings, strict=True):
        left.add(Timing(run.wall - one.wall, run.cpu - one.cpu))
    return left


def _stubbed_inprocess(steps: int, workers: int, cwd: Path) -> Timing:
    """``run_recipe`` with the native backend's ``run`` answering at once, spawning nothing."""
    from shinobi.backends.base import BackendRun
    from shinobi.backends.native import NativeBackend

    original = NativeBackend.run
    NativeBackend.run = lambda self, invocation, control: BackendRun(returncode=0)  # type: ignore[method-assign]
    try:
        return _inprocess(steps, workers, cwd)
    finally:
        NativeBackend.run = original  # type: ignore[method-assign]


def measure_own_work(report: Report, steps: int, workers: int, reps: int, workdir: Path) -> None:
    """Scheduling, dispatch and results alone: the part of a step that is pure shinobi.

    The native backend's ``run`` is replaced, in this process only and for
    this measurement only, by one that returns success without spawning, so
    no process, log file or tool is involved; what remains is the per-step
    work the 0.3 ms budget is about, without the machine's fork/exec and
    filesystem costs.
    """
    samples = Samples()
    for rep in range(reps + 1):
        timing = _stubbed_inprocess(steps, workers, scratch(workdir))
        if rep:
            samples.add(Timing(timing.wall / steps * 1000, timing.cpu / steps * 1000))
    label = f"{steps} steps, -j {workers}, run_recipe with spawning stubbed out"
    report.add(Figure.of(f"run.touch_{steps}.j{workers}.own_work", label, "ms/step", samples))
