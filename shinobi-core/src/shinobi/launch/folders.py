"""Where a workspace keeps its launches, found without reading them.

``<workdir>/.shinobi/<recipe>/<run-id>/`` holds one launch: its handle and,
once it is known to have ended, a note saying so. A ``ninja run`` starting in
the workspace looks here for launches that may still be running, so this
module imports nothing but the standard library's path handling.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENDED_NAME", "HANDLE_NAME", "TAKEN", "handle_paths", "holds_launches", "unended"]

HANDLE_NAME = "handle.json"
#: Beside a launch's own handle once it is known to have ended (it holds how):
#: nothing more happens to such a launch, so what looks for launches still
#: running (a ``ninja run`` starting in the workspace) need not ask the engine.
ENDED_NAME = "ended"

#: Folders of ``.shinobi`` that are not a recipe's (the local runs, the markers of
#: runs going now: see :mod:`shinobi.live_runs`), and where a recipe of that name
#: keeps its launches instead (``+`` is in no name a recipe's folder is given).
TAKEN = {"runs": "runs+recipe", "live": "live+recipe"}


def holds_launches(folder: str) -> bool:
    """Whether ``<workdir>/.shinobi/<folder>`` may hold launches: a folder taken by
    something else (``runs``, the local runs) never does, so a handle.json found there
    is a user's file, not a launch for ``ninja clean --launches`` to remove."""
    return folder not in TAKEN


def handle_paths(root: Path) -> list[Path]:
    """The per-launch handles ``<root>/<recipe>/<run-id>/handle.json`` (``root``: a
    workspace's ``.shinobi``), looking only into the folders that may hold launches:
    never into ``.shinobi/runs``, which may hold thousands of local runs."""
    return [
        Path(launch.path) / HANDLE_NAME
        for recipe in _folders(root)
        if holds_launches(recipe.name)
        for launch in _folders(Path(recipe.path))
        if os.path.isfile(os.path.join(launch.path, HANDLE_NAME))
    ]


def unended(workdir: Path) -> list[Path]:
    """The handles of the workspace's launches not known to have ended."""
    return [
        path
        for path in handle_paths(workdir / ".shinobi")
        if not os.path.exists(path.parent / ENDED_NAME)
    ]


def _folders(path: Path) -> list[os.DirEntry[str]]:
    """The folders in ``path`` (links to folders too); none when it cannot be listed.

    Hidden ones too: a recipe may be named ``.slow``, and its launches were left
    out of every scan (``ninja run``'s check for a launch writing the same
    paths, ``ninja status .``); a folder holding no ``handle.json`` is passed
    over anyway."""
    try:
        with os.scandir(path) as entries:
            return [e for e in entries if e.is_dir()]
    except OSError:
        return []
