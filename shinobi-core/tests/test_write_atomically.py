"""Records are written whole (a temporary file, then a rename) wherever they fit."""

from __future__ import annotations

import os
from pathlib import Path

from shinobi.file_digests import write_atomically

PATH_MAX = os.pathconf("/", "PC_PATH_MAX")  # 4096 on Linux, the final NUL included


def _as_deep_as_allowed(tmp_path: Path, name: str) -> Path:
    """A path to ``name`` exactly as long as the system takes, in real folders."""
    folder = str(tmp_path)
    room = PATH_MAX - 1 - len(name) - 1
    while len(folder) < room:
        folder = os.path.join(folder, "d" * min(200, room - len(folder) - 1))
    os.makedirs(folder)
    path = os.path.join(folder, name)
    assert len(path) == PATH_MAX - 1
    return Path(path)


def test_a_file_that_fits_is_written_though_its_folder_is_as_deep_as_allowed(
    tmp_path: Path,
) -> None:
    # A manifest 4,000 characters deep failed for its temporary name's length,
    # and the run with it, though manifest.json itself fits.
    path = _as_deep_as_allowed(tmp_path, "manifest.json")
    write_atomically(path, b"{}\n", fsync=True)
    assert path.read_bytes() == b"{}\n"
    assert os.listdir(path.parent) == ["manifest.json"]  # no temporary left behind
