"""Start-up: ``ninja --help``, ``import shinobi`` and a one-step ``ninja run``.

These are paid every time someone types ``ninja``, so they are measured the
way a user meets them: the installed console script, a new process per
repetition, wall time from spawn to exit. Two reference figures put them in
proportion: a bare interpreter, and an interpreter that imports click and
pydantic and creates one model, which every ``ninja run`` has to do before
shinobi's own start-up begins (the recipe's inputs are a pydantic model).
The reference includes pydantic's scan for plugins, which ``ninja`` skips
(``shinobi.cli.pydantic_plugins``): what a plain click and pydantic command pays.
"""

from __future__ import annotations

from pathlib import Path

import recipes
from figures import Figure, Report
from runs import scratch
from timing import CACHE_DISABLED, Samples, Timing, bench_env, repeat, run_timed

__all__ = ["measure_startup"]

#: What any click + pydantic command pays before its own work: the imports and
#: pydantic's set-up on its first model.
_DEPENDENCIES = (
    "import click, pydantic, pathlib\nclass First(pydantic.BaseModel):\n    path: pathlib.Path\n"
)

_IMPORT_ONLY = (
    "import time; t, c = time.perf_counter(), time.process_time(); import shinobi;"
    " print(time.perf_counter() - t, time.process_time() - c)"
)


def _import_seconds(python: str, workdir: Path) -> Timing:
    """The time the import statement alone takes inside a fresh interpreter."""
    out = workdir / "import.txt"
    run_timed([python, "-c", _IMPORT_ONLY], cwd=workdir, env=bench_env(), stdout=out)
    wall, cpu = (float(x) for x in out.read_text().split())
    return Timing(wall, cpu)


def measure_startup(report: Report, bindir: Path, reps: int, workdir: Path) -> None:
    ninja = str(bindir / "ninja")
    python = str(bindir / "python")
    env = bench_env()

    def figure(key: str, label: str, samples: Samples) -> None:
        report.add(Figure.of(key, label, "ms", samples, scale=1000))

    figure(
        "startup.help",
        "ninja --help (wall)",
        repeat(reps, lambda: run_timed([ninja, "--help"], cwd=workdir, env=env)),
    )
    figure(
        "startup.python",
        "python -c pass (wall, for reference)",
        repeat(reps, lambda: run_timed([python, "-c", "pass"], cwd=workdir, env=env)),
    )
    figure(
        "startup.import",
        "python -c 'import shinobi' (wall)",
        repeat(reps, lambda: run_timed([python, "-c", "import shinobi"], cwd=workdir, env=env)),
    )
    figure(
        "startup.import_only",
        "import shinobi (the statement alone)",
        repeat(reps, lambda: _import_seconds(python, workdir)),
    )
    figure(
        "startup.dependencies",
        "python + click + pydantic + a first model (reference)",
        repeat(reps, lambda: run_timed([python, "-c", _DEPENDENCIES], cwd=workdir, env=env)),
    )
    one_step = [ninja, "run", f"{Path(recipes.__file__).resolve()}:touch_1"]
    uncached = bench_env(CACHE_DISABLED)
    figure(
        "startup.run_one_step",
        "ninja run of a one-step recipe, cache disabled (wall)",
        # each in a fresh directory: a run leaves its files and run folder
        repeat(reps, lambda: run_timed(one_step, cwd=scratch(workdir), env=uncached)),
    )


#: Modules ``ninja --help`` must not load: validation models, plugin discovery, plugins
#: (every plugin distribution's import package starts with ``shinobi_``).
HEAVY = ("pydantic", "pydantic_core", "stevedore")

_HELP_IMPORTS = """
import contextlib, io, sys
from shinobi.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["--help"])
    except SystemExit:
        pass
heavy = sorted(
    m for m in sys.modules if m.split(".")[0] in HEAVY or m.startswith("shinobi_")
)
print("\\n".join(heavy))
"""


def count_heavy_imports(report: Report, bindir: Path, workdir: Path) -> None:
    """How many validation or plugin modules ``ninja --help`` imports (should be none)."""
    out = workdir / "help-imports.txt"
    code = f"HEAVY = {HEAVY!r}\n{_HELP_IMPORTS}"
    run_timed([str(bindir / "python"), "-c", code], cwd=workdir, env=bench_env(), stdout=out)
    heavy = [line for line in out.read_text().splitlines() if line]
    roots = sorted({m.split(".")[0] for m in heavy})
    report.add(
        Figure(
            "startup.help_heavy_modules",
            "pydantic/plugin modules imported by --help",
            "modules",
            float(len(heavy)),
            note=f"loaded: {', '.join(roots)}" if roots else "",
        )
    )
