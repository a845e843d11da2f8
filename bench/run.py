"""The benchmark suite: ``python bench/run.py`` measures shinobi's speed targets here.

It runs every measurement several times, reports medians in a table with each
target's pass/miss, and writes ``bench/results.json`` (machine, python,
commit, every figure with its samples, every target). Run it with the
interpreter of the environment shinobi-core is installed in: the CLI figures
use the ``ninja`` console script next to that interpreter. See
docs/performance.md for what each figure means.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

# Only modules that need nothing but the standard library here: the sections
# import shinobi and pydantic, which must not fail before the check in main().
from figures import Report  # noqa: E402
from report import print_table, write_results  # noqa: E402
from targets import targets  # noqa: E402
from timing import CommandFailed, bench_env  # noqa: E402

RUN_SIZES = (100, 1000)
PLAN_SIZES = (10_000, 100_000)
CACHED_STEPS = 1000
SECTIONS = ("startup", "runs", "dryrun", "graph", "compile", "cache", "status")


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/run.py", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=SECTIONS,
        metavar="SECTION",
        help=f"measure only this section (repeatable): {', '.join(SECTIONS)}",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one sample of each figure (two of start-up), with the large recipes ten times"
        " smaller: a check of the suite itself, whose verdicts say nothing of the targets;"
        " writes no results",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=BENCH / "results.json",
        help="where to write the results (default: bench/results.json)",
    )
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    return parser.parse_args(argv)


def _reps(quick: bool) -> dict[str, int]:
    """Repetitions per measurement: more where a sample is cheap and noisy."""
    if quick:
        return {
            "startup": 2,
            "runs_small": 1,
            "runs_large": 1,
            "plan_small": 1,
            "plan_large": 1,
            "cache": 1,
        }
    return {
        "startup": 15,
        "runs_small": 7,
        "runs_large": 5,
        "plan_small": 5,
        "plan_large": 3,
        "cache": 7,
    }


def _isolate_this_process() -> None:
    """The in-process figures read configuration from os.environ: clean it the same way."""
    clean = bench_env()
    for key in list(os.environ):
        if key not in clean:
            del os.environ[key]
    os.environ.update(clean)


def _stopped(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    bindir = Path(sys.executable).parent
    if not (bindir / "ninja").exists() or importlib.util.find_spec("shinobi") is None:
        print(
            f"bench: no ninja console script next to {sys.executable}; run the suite with the"
            " interpreter of the environment shinobi-core is installed in"
            " (e.g. .venv/bin/python bench/run.py)",
            file=sys.stderr,
        )
        return 2
    if not (args.quick or args.no_write) and not os.access(args.output.parent, os.W_OK):
        print(
            f"bench: cannot write the results to {args.output}: {args.output.parent} is not a"
            " writable directory (give --output, or --no-write)",
            file=sys.stderr,
        )
        return 2
    _isolate_this_process()
    from cached import measure_cached_rerun
    from planning import measure_build_graph, measure_compile, measure_dryrun
    from runs import measure_own_work, measure_runs
    from startup import count_heavy_imports, measure_startup
    from status import measure_status_calls

    signal.signal(signal.SIGTERM, _stopped)  # like Ctrl-C: the scratch folder is removed
    reps = _reps(args.quick)
    wanted = set(args.only or SECTIONS)
    report = Report()
    started_load = [round(x, 2) for x in os.getloadavg()]
    workdir = Path(tempfile.mkdtemp(prefix="shinobi-bench-"))
    large = (1_000, 10_000) if args.quick else PLAN_SIZES

    def runs(steps: int, workers: int) -> Callable[[], None]:
        count = reps["runs_small" if steps == RUN_SIZES[0] else "runs_large"]
        return lambda: measure_runs(report, bindir, steps, workers, count, workdir)

    def own_work(workers: int) -> Callable[[], None]:
        count = reps["runs_large"]
        return lambda: measure_own_work(report, RUN_SIZES[1], workers, count, workdir)

    # (section, what it measures, as the progress line says it, how)
    plan: list[tuple[str, str, Callable[[], None]]] = [
        ("startup", "start-up", lambda: measure_startup(report, bindir, reps["startup"], workdir)),
        ("startup", "modules --help loads", lambda: count_heavy_imports(report, bindir, workdir)),
        *[
            ("runs", f"{steps} steps at -j {workers}", runs(steps, workers))
            for steps in RUN_SIZES
            for workers in (1, 2)
        ],
        *[("runs", f"own work at -j {workers}", own_work(workers)) for workers in (1, 2)],
        (
            "dryrun",
            "--dryrun",
            lambda: measure_dryrun(report, bindir, large, reps["plan_large"], workdir),
        ),
        ("graph", "build_graph", lambda: measure_build_graph(report, large, reps["plan_small"])),
        (
            "compile",
            "ninja compile",
            lambda: measure_compile(report, bindir, large, reps["plan_large"], workdir),
        ),
        (
            "cache",
            "the cached re-run",
            lambda: measure_cached_rerun(report, bindir, CACHED_STEPS, reps["cache"], workdir),
        ),
        ("status", "status calls", lambda: measure_status_calls(report, bindir, workdir)),
    ]
    begun = time.monotonic()
    try:
        for section, what, measure in plan:
            if section in wanted:
                print(f"bench: measuring {section}: {what} ...", file=sys.stderr, flush=True)
                measure()
                gc.collect()  # no in-process figure pays for the previous one's garbage
    except CommandFailed as exc:
        print(f"bench: a measured command failed, so no figure is reported: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench: interrupted; nothing was written", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    every = targets(RUN_SIZES[1], *large, CACHED_STEPS)
    found = [t for t in every if t.figure in report.figures]
    print_table(report, found, quick=args.quick)
    print(f"(measured in {time.monotonic() - begun:.0f} s)")
    if not (args.quick or args.no_write):
        settings = {"repetitions": reps, "sections": sorted(wanted), "statistic": "median"}
        write_results(args.output, report, found, BENCH.parent, settings, started_load)
        print(f"results written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
