"""The launches index under the user's state directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.errors import MachineRefused
from shinobi.launch.handle import LaunchHandle, write_handle
from shinobi.launch.index import forget_launches, index_path, list_launches, record_launch


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def recorded(workdir: Path, run_id: str, created: float) -> LaunchHandle:
    handle = LaunchHandle(
        engine="slurm", recipe="pipe", run_id=run_id, workdir=str(workdir), created=created
    )
    write_handle(handle)
    record_launch(handle)
    return handle


def test_the_index_lives_in_the_user_state_dir(state: Path) -> None:
    assert index_path() == state / "shinobi" / "launches.jsonl"


def test_launches_are_listed_oldest_first_and_by_workspace(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    recorded(here, "b", 2.0)
    recorded(here, "a", 1.0)
    recorded(there, "c", 3.0)
    assert [e.run_id for e in list_launches(here)] == ["a", "b"]
    assert [e.run_id for e in list_launches()] == ["a", "b", "c"]


def test_forgetting_removes_only_the_named_launches(tmp_path: Path) -> None:
    first = recorded(tmp_path, "a", 1.0)
    recorded(tmp_path, "b", 2.0)
    assert first.path is not None
    assert forget_launches([first.path]) == 1
    assert [e.run_id for e in list_launches()] == ["b"]
    assert forget_launches([first.path]) == 0


def test_a_torn_line_does_not_hide_the_others(tmp_path: Path) -> None:
    recorded(tmp_path, "a", 1.0)
    with open(index_path(), "a") as fh:
        fh.write('{"handle": "/x", "work')
    recorded(tmp_path, "b", 2.0)
    assert [e.run_id for e in list_launches()] == ["a", "b"]


def test_a_line_that_is_not_utf8_does_not_hide_the_others(tmp_path: Path) -> None:
    recorded(tmp_path, "a", 1.0)
    with open(index_path(), "ab") as fh:
        fh.write(b'{"handle": "/x\xff", "workdir": "/x"}\n')
    recorded(tmp_path, "b", 2.0)
    assert [e.run_id for e in list_launches()] == ["a", "b"]


def test_an_index_that_cannot_be_read_is_refused_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", "/dev/null")  # as HOME=/dev/null gives
    with pytest.raises(MachineRefused, match="set XDG_STATE_HOME to a directory of yours"):
        list_launches()


def test_recording_needs_a_written_handle(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="write the handle"):
        record_launch(LaunchHandle(engine="slurm", recipe="r", run_id="x", workdir=str(tmp_path)))
