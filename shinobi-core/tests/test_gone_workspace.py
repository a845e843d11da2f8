"""A launch whose workspace was deleted can be forgotten.

``ninja runs --all`` noted such a launch on every call ("its handle ... is
gone") without a way out: ``ninja clean --launches --workdir GONE`` was
refused because the folder does not exist, and a clean elsewhere did not
touch the entry.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_in_process import in_process as _ninja

from shinobi.launch.handle import LaunchHandle, write_handle
from shinobi.launch.index import list_launches, record_launch


def _recorded(workdir: Path, run_id: str) -> None:
    handle = LaunchHandle(
        engine="slurm", recipe="pipe", run_id=run_id, workdir=str(workdir), created=1.0
    )
    write_handle(handle)
    record_launch(handle)


def test_a_deleted_workspace_s_launches_are_forgotten_as_the_note_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gone, kept = tmp_path / "gone ws", tmp_path / "kept"
    _recorded(gone, "20260101-000000-aaaaaa")
    _recorded(kept, "20260101-000000-bbbbbb")
    shutil.rmtree(gone)
    code, _, err = _ninja(capsys, "runs", "--all")
    assert code == 0, err
    note = next(line for line in err.splitlines() if "is gone" in line)
    assert f"`ninja clean --launches --workdir '{gone}'` forgets it" in note
    code, out, err = _ninja(capsys, "clean", "--launches", "--workdir", str(gone))
    assert code == 0, err
    assert "forgot 1 launch(es)" in out
    assert [e.run_id for e in list_launches()] == ["20260101-000000-bbbbbb"]
    _, _, err = _ninja(capsys, "runs", "--all")
    assert "is gone" not in err


def test_cleaning_the_runs_of_a_missing_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _ninja(capsys, "clean", "--runs", "--workdir", str(tmp_path / "nope"))
    assert (code, out) == (2, "")
    assert "no such folder" in err and err.count("\n") == 1
