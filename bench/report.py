"""The suite's output: a table on stdout and ``results.json`` for comparing commits."""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from figures import Report, Target

__all__ = ["machine", "print_table", "provenance", "write_results"]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                kib = int(line.split()[1])
                return f"{kib / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def machine() -> dict[str, Any]:
    """What the figures depend on: this host, its load, and the interpreter."""
    return {
        "host": platform.node(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory": _memory(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def _git(repo: Path, *args: str) -> str:
    """git's answer, or "" without one (no git here, or not a checkout)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
        )
    except OSError:
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


#: The code the figures measure: core, the Slurm plugin (compile, status) and the suite.
MEASURED = ("shinobi-core/src", "shinobi-slurm/src", "bench")


def provenance(repo: Path) -> dict[str, Any]:
    """The commit measured, and whether the measured code differed from it."""
    changed = _git(repo, "status", "--porcelain", "--", *MEASURED)
    paths = [line[3:] for line in changed.splitlines() if line]
    return {
        "commit": _git(repo, "rev-parse", "HEAD") or "unknown",
        "uncommitted_changes": [p for p in paths if not p.endswith("results.json")],
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
    }


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit in ("ms", "ms/step", "us"):
        text = f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"
    elif unit == "s":
        text = f"{value:.3f}"
    elif unit == "x":
        text = f"{value:.2f}"
    else:
        text = f"{value:g}"
    return f"{text} {unit}"


def print_table(report: Report, targets: list[Target], quick: bool = False) -> None:
    """One row per figure: the wall-time median, the same from CPU time, the target,
    and pass / MISS (judged on wall time) or the reason it was not measured."""
    by_figure = {t.figure: t for t in targets}
    header = ("figure", "median", "cpu", "target", "")
    rows: list[tuple[str, ...]] = []
    for key, figure in report.figures.items():
        target = by_figure.get(key)
        status = target.status(report.figures) if target else ""
        mark = {"pass": "pass", "miss": "MISS"}.get(status, "")
        if figure.value is None:
            mark = figure.note
        elif figure.note:
            mark = f"{mark} ({figure.note})".strip()
        cpu = _number(figure.cpu, figure.unit) if figure.cpu is not None else ""
        rows.append(
            (
                figure.label,
                _number(figure.value, figure.unit),
                cpu,
                target.text if target else "",
                mark,
            )
        )
    widths = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(4)]

    def line(row: tuple[str, ...]) -> str:
        cells = [
            f"{row[0]:<{widths[0]}}",
            f"{row[1]:>{widths[1]}}",
            f"{row[2]:>{widths[2]}}",
            f"{row[3]:<{widths[3]}}",
            row[4],
        ]
        return "  ".join(cells).rstrip()

    lines = [line(header), "-" * (sum(widths) + 12)]
    lines.extend(line(row) for row in rows)
    print("\n".join(lines))
    statuses = [t.status(report.figures) for t in targets]
    print(
        f"\ntargets: {statuses.count('pass')} pass, {statuses.count('miss')} miss,"
        f" {statuses.count('not measured')} not measured (judged on the wall-time median)"
    )
    if quick:
        print(
            "(--quick: one sample each, and the 10,000/100,000-step targets judged on"
            " 1,000/10,000 steps: a check of the suite, not of the targets)"
        )


def write_results(
    path: Path,
    report: Report,
    targets: list[Target],
    repo: Path,
    settings: dict[str, Any],
    started_load: list[float],
) -> None:
    """Write the results file atomically (a crash leaves the previous one intact)."""
    host = machine()
    host["load_average_at_start"] = started_load
    data: dict[str, Any] = {
        "schema": 1,
        "measured_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": host,
        **provenance(repo),
        "settings": settings,
        "figures": {key: figure.to_json() for key, figure in report.figures.items()},
        "targets": [
            {
                "figure": t.figure,
                "target": t.text,
                "limit": t.limit,
                "value": report.value(t.figure),
                "status": t.status(report.figures),
            }
            for t in targets
        ],
    }
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)
