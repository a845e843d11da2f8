"""Counting stand-ins for ``sacct`` and ``squeue``, put first on PATH by the status benchmark.

Each call appends one line (the tool and its arguments) to the file named by
``BENCH_SHIM_LOG`` and answers for the job ids listed in ``BENCH_SHIM_JOBS``
(one per line), named ``BENCH_SHIM_JOB_NAME``, as a Slurm whose jobs have all
completed would: ``sacct``
prints one ``-P`` line per asked job with the fields ``-o`` names, and
``squeue`` prints nothing, since finished jobs have left the queue. The
answers only need to be plausible enough for ``ninja status`` to read them;
what the benchmark measures is how many calls one status round makes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["install", "main"]

#: What a completed job looks like, field by field; unlisted fields are empty.
_COMPLETED = {
    "State": "COMPLETED",
    "ExitCode": "0:0",
    "DerivedExitCode": "0:0",
    "Start": "2026-01-01T00:00:00",
    "End": "2026-01-01T00:00:01",
    "Submit": "2026-01-01T00:00:00",
    "Elapsed": "00:00:01",
    "Reason": "None",
    "NodeList": "node01",
    "Partition": "debug",
}


def _option(args: Sequence[str], short: str, long: str) -> str | None:
    """The value of ``-x VALUE``, ``-xVALUE``, ``--long VALUE`` or ``--long=VALUE``."""
    for i, arg in enumerate(args):
        if arg in (short, long) and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(long + "="):
            return arg.split("=", 1)[1]
        if arg.startswith(short) and len(arg) > len(short) and not arg.startswith("--"):
            return arg[len(short) :]
    return None


def _sacct(args: Sequence[str], jobs: list[str], name: str) -> str:
    fields = (_option(args, "-o", "--format") or "JobID,State,ExitCode").split(",")
    lines = []
    if "-n" not in args and "--noheader" not in args:
        lines.append("|".join(fields))
    for job in jobs:
        row = {"JobID": job, "JobIDRaw": job, "JobName": name, **_COMPLETED}
        lines.append("|".join(row.get(f.split("%")[0], "") for f in fields))
    return "".join(f"{line}\n" for line in lines)


def main(tool: str, args: Sequence[str]) -> int:
    with open(os.environ["BENCH_SHIM_LOG"], "a", encoding="utf-8") as log:
        log.write(" ".join([tool, *args]) + "\n")
    known = Path(os.environ["BENCH_SHIM_JOBS"]).read_text().split()
    asked = _option(args, "-j", "--jobs")
    jobs = [j for j in asked.split(",") if j in set(known)] if asked else known
    if tool == "sacct":
        sys.stdout.write(_sacct(args, jobs, os.environ.get("BENCH_SHIM_JOB_NAME", "")))
    return 0


_WRAPPER = """#!{python}
import sys
sys.path.insert(0, {bench!r})
from slurm_shim import main
sys.exit(main({tool!r}, sys.argv[1:]))
"""


def install(bindir: Path) -> None:
    """Write executable ``sacct`` and ``squeue`` into ``bindir``, run by this interpreter."""
    bindir.mkdir(parents=True, exist_ok=True)
    bench = str(Path(__file__).resolve().parent)
    for tool in ("sacct", "squeue"):
        path = bindir / tool
        path.write_text(_WRAPPER.format(python=sys.executable, bench=bench, tool=tool))
        path.chmod(0o755)
