"""Removing a finished launch's local traces: its run folder, its handle, its index entry.

This is opt-in (``ninja clean --launches``): deleting a handle does not stop
a launch, it only destroys ``ninja status``'s one local record of it, so the
command refuses launches that may still be running unless forced.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

from shinobi.errors import UsageError
from shinobi.launch.handle import HANDLE_NAME, LaunchHandle, launch_dir
from shinobi.launch.index import forget_launches

__all__ = ["remove_damaged_handle", "remove_launch"]


def remove_launch(
    handle: LaunchHandle, *, record_only: bool = False, workspace: Path | None = None
) -> int:
    """Delete ``handle``'s run folder (scripts, logs, handle), forget it; count the files.

    ``workspace``: the one being cleaned; a launch whose folder lies outside its
    ``.shinobi`` is refused (UsageError), since deleting it would clean another
    workspace (the one a copied handle still names), never this one.

    ``record_only``: the launch may still run (a forced clean), and its jobs
    write their logs into that folder and read its loop and exit files, so
    only the handle goes; deleting the folder would fail every job still
    queued ("could not open its --output file").
    """
    run_dir = handle.run_dir
    if workspace is not None:
        _refuse_outside(handle, workspace)
    if record_only:
        own = run_dir / HANDLE_NAME
        removed = 1 if own.is_file() else 0
        own.unlink(missing_ok=True)
    else:
        removed = sum(1 for p in run_dir.rglob("*") if p.is_file()) if run_dir.is_dir() else 0
        shutil.rmtree(run_dir, ignore_errors=True)
    latest = launch_dir(handle.workdir, handle.recipe) / HANDLE_NAME
    if _names_run(latest, handle.run_id):
        latest.unlink(missing_ok=True)
        removed += 1
    with contextlib.suppress(OSError):
        latest.parent.rmdir()  # only when nothing else of the recipe is left
    paths: list[str | Path] = [run_dir / HANDLE_NAME, latest]
    if handle.path is not None:
        paths.append(handle.path)
    forget_launches(paths)
    return removed


def remove_damaged_handle(path: Path, workspace: Path | None = None) -> str:
    """Remove a handle that cannot be read, the file alone: whether its jobs still
    run and write their logs into its folder cannot be told, so the folder stays
    (as ``--force`` leaves a running launch's); the index forgets it. Returns what
    was removed, as the user is told it. One outside ``workspace``'s ``.shinobi``
    (an index entry naming another's) is refused (UsageError)."""
    if workspace is not None and not _inside(path, workspace):
        raise UsageError(
            f"the damaged launch handle {path} is not under {workspace / '.shinobi'}, the"
            " workspace being cleaned; remove it from its own workspace (--workdir)"
        )
    path.unlink(missing_ok=True)
    folder = path.parent
    if folder.parent.parent.name == ".shinobi":
        removed = f"the file; its folder {folder} is kept (its jobs, if any run, write there)"
    else:
        removed = "the file"
    forget_launches([path])
    return removed


def _refuse_outside(handle: LaunchHandle, workspace: Path) -> None:
    if not _inside(handle.run_dir, workspace):
        raise UsageError(
            f"launch {handle.name}: its folder {handle.run_dir} is not under"
            f" {workspace / '.shinobi'}, the workspace being cleaned; clean it from its own"
            " workspace (--workdir)"
        )


def _inside(path: Path, workspace: Path) -> bool:
    """Whether ``path`` lies under ``<workspace>/.shinobi`` (links resolved)."""
    root = os.path.realpath(workspace / ".shinobi")
    return os.path.commonpath([root, os.path.realpath(path)]) == root


def _names_run(path: Path, run_id: str) -> bool:
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("run_id") == run_id)
    except (OSError, ValueError, AttributeError):
        return False
