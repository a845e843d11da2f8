"""What a run's folder says beyond its manifest, for ``ninja report``.

The manifest is the run's own account, and a killed ninja leaves it
unfinished: it lists a step's logs only once the step has ended, and says
the run is ``running`` forever. The folder knows better (its lock, the log
files), and ``ninja runs`` and ``ninja logs`` read it: the report reads it
with their helpers so the three never disagree.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from shinobi.local_runs import LocalRun, describe_run, is_run_name, run_logs
from shinobi.render.report_html import OnDisk, RunOrigin

__all__ = ["read_folder"]


def _step_names(manifest: Mapping[str, Any]) -> list[str]:
    """Every step the manifest knows of: recorded ones and graph nodes."""
    steps = manifest.get("steps") or []
    nodes = (manifest.get("graph") or {}).get("nodes") or []
    return list(dict.fromkeys(str(s["name"]) for s in [*steps, *nodes]))


def _logs_by_step(run: LocalRun, names: Iterable[str]) -> dict[str, dict[str, str]]:
    """The log files of each of ``names`` in ``run``'s folder, as ``ninja logs`` finds them.

    One listing of the folder for every step (a run can have thousands); the
    names are matched with the naming ninja gives the files.
    """
    from shinobi.session import safe_name

    by_file: dict[str, dict[str, str]] = {}
    for title, path in run_logs(run, None):
        stem, stream = title.rsplit(" ", 1)
        by_file.setdefault(stem, {})[stream] = path.relative_to(run.path).as_posix()
    # titled by the step's name where the manifest gives it, else by the file's stem
    found = {name: by_file.get(name) or by_file.get(safe_name(name)) for name in names}
    return {name: logs for name, logs in found.items() if logs}


def _last_activity(run_dir: Path, logs: Mapping[str, Mapping[str, str]]) -> float | None:
    """When the run last wrote anything: its manifest or a log (not the folder, which a
    report written into it touches)."""
    paths = [run_dir / "manifest.json", *(run_dir / p for s in logs.values() for p in s.values())]
    stamps = []
    for path in paths:
        with contextlib.suppress(OSError):
            stamps.append(path.stat().st_mtime)
    return max(stamps, default=None)


def _origins(manifest: Mapping[str, Any], run_dir: Path, page_dir: Path) -> dict[str, RunOrigin]:
    """The sibling folders of the runs whose cache served this run's steps, with the
    logs those steps left there: under the name the step ran as there
    (``cached_step``), which is another step's when another step of the same
    command made the result (a slice of a reordered scatter), as ``ninja logs``
    finds them."""
    served: dict[str, dict[str, str]] = {}  # run id -> {step here: its name there}
    for step in manifest.get("steps") or []:
        details = step.get("details")
        if not isinstance(details, Mapping):
            continue
        origin, there = details.get("cached_from"), details.get("cached_step")
        if step.get("cached") and isinstance(origin, str) and is_run_name(origin):
            name = str(step["name"])
            served.setdefault(origin, {})[name] = there if isinstance(there, str) else name
    origins = {}
    for run_id, names in served.items():
        folder = run_dir.parent / run_id
        if folder.is_dir():
            href = os.path.relpath(folder, page_dir)
            logs = _logs_by_step(describe_run(folder), set(names.values()))
            by_step = {here: logs[there] for here, there in names.items() if there in logs}
            origins[run_id] = RunOrigin(href, by_step)
    return origins


def read_folder(manifest_path: Path, manifest: Mapping[str, Any], page_dir: Path) -> OnDisk:
    """What the folder of ``manifest_path`` says, with links relative to ``page_dir``.

    A manifest read from anywhere but a run folder (a ``manifest.json`` copied
    away, under another name) has no folder to ask: the manifest alone speaks.
    """
    if manifest_path.name != "manifest.json":
        return OnDisk()
    run = describe_run(manifest_path.parent)
    logs = _logs_by_step(run, _step_names(manifest))
    return OnDisk(
        state=run.state,
        last_activity=_last_activity(run.path, logs),
        logs=logs,
        origins=_origins(manifest, run.path, page_dir),
    )
