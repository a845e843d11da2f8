"""``ninja status .`` over launches of several recipes names the recipes as
``ninja status NAME`` accepts them: it listed their folders under ``.shinobi``,
whose names are made file-safe (``cal ms`` is ``cal_ms-<hash>``), and status
refused every name it had just listed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_in_process import in_process as ninja
from test_launch_fixtures import FakeTarget, engine, launch

__all__ = ["engine"]  # the fixture, imported so pytest finds it


@pytest.mark.parametrize("command", ["status", "logs"])
def test_a_folder_of_several_recipes_lists_names_that_are_accepted(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    launch(tmp_path, recipe="cal ms", run_id="run1")
    launch(tmp_path, recipe="runs", run_id="run2", created=2.0)  # its folder is runs+recipe
    code, _, err = ninja(capsys, command, ".")
    assert code == 2
    listed = re.search(r"launches of several recipes \((.*)\); name one", err)
    assert listed is not None, err
    assert listed.group(1) == "'cal ms', runs"
    for name, run_id in (("cal ms", "run1"), ("runs", "run2")):
        code, out, err = ninja(capsys, "status", name)
        assert code == 0, err
        assert f"launch {name}/{run_id}" in out


def test_a_recipe_named_live_keeps_its_launches_apart_from_the_markers_of_runs(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``.shinobi/live`` holds the markers of runs going now: a recipe called ``live``
    put its launch folders among them."""
    from shinobi.launch.handle import HANDLE_NAME, run_folder
    from shinobi.live_runs import LIVE_DIR

    launch(tmp_path, recipe="live", run_id="run1")
    handle = run_folder(tmp_path, "live", "run1") / HANDLE_NAME
    assert handle.is_file()
    assert handle.parent.parent != tmp_path / ".shinobi" / LIVE_DIR
    code, out, err = ninja(capsys, "status", "live")
    assert code == 0, err
    assert "launch live/run1" in out


def test_a_tracker_whose_constructor_raises_is_the_plugin_s_fault(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``ninja status`` made the plugin by hand: its RuntimeError was ninja's own
    internal error (70, "please report it"), where every other command names the plugin."""
    launch(tmp_path, recipe="pipe", run_id="run1")

    def broken(self: FakeTarget, settings: object) -> None:
        raise RuntimeError("no such cluster")

    monkeypatch.setattr(FakeTarget, "__init__", broken)
    code, _, err = ninja(capsys, "status", "pipe")
    assert code == 1, err
    assert "raised RuntimeError: no such cluster in its constructor" in err
    assert "Traceback" not in err and "please report" not in err
