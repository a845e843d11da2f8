"""A workspace a group shares: what one member's run leaves, the others can use.

Found by an audit as a site admin: in a group-writable setgid workdir, the
first member's run (umask 022) made ``.shinobi/``, ``runs/`` and ``live/`` its
own, and every other member's run failed (exit 74); launch handles were
always 0600, so a colleague saw them as "damaged", was told to ``clean
--launches --force``, and that removed the running launch's whole folder.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_in_process import in_process
from test_launch_fixtures import FakeTarget, engine, launch

from shinobi.config import load_config
from shinobi.launch.handle import ForeignHandle, read_handle
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe

__all__ = ["engine"]


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Path]:
    """A folder as a group shares one: group-writable and setgid."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o2775)
    old = os.umask(0o022)
    yield folder
    os.umask(old)


def _group_writable(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_IWGRP)


def test_a_runs_records_are_the_groups_in_a_shared_workspace(shared: Path) -> None:
    recipe = Recipe("r")
    recipe.add_step("s", Cab("s", ["true"]))
    assert run_recipe(recipe, cwd=shared, config=load_config({"cache.enabled": False})).ok
    for made in (".shinobi", ".shinobi/runs", ".shinobi/live"):
        assert _group_writable(shared / made), made
    (run,) = (shared / ".shinobi" / "runs").iterdir()
    assert _group_writable(run) and _group_writable(run / "logs")


def test_a_launch_handle_is_made_as_the_umask_says(shared: Path) -> None:
    from shinobi.launch.handle import LaunchHandle, LaunchJob, write_handle

    handle = LaunchHandle("fake", "pipe", "run1", str(shared), jobs=[LaunchJob("make", "1")])
    path = write_handle(handle)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # umask 022, not 0600
    for made in (".shinobi", ".shinobi/pipe", ".shinobi/pipe/run1"):
        assert _group_writable(shared / made), made


def test_a_handle_this_user_may_not_read_is_another_users_never_removed(
    engine: type[FakeTarget],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    handle = launch(tmp_path)
    assert handle.path is not None
    real = Path.read_text

    def refused(path: Path, *args: object, **kwargs: object) -> str:
        if path.name == "handle.json":  # as for another user's 0600 file (root reads all)
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", refused)
    with pytest.raises(ForeignHandle, match="and this user may not read it"):
        read_handle(handle.path)
    code, _, err = in_process(capsys, "clean", "--launches", "--force")
    assert code == 1
    assert "kept" in err and "may not read it" in err
    assert handle.path.exists() and (handle.run_dir / "logs").is_dir()


def test_a_run_that_cannot_mark_itself_live_says_so(tmp_path: Path) -> None:
    """Its guard against another run of the workdir was off without a word: two
    runs at once both stored what the other may have written."""
    (tmp_path / ".shinobi").mkdir()
    (tmp_path / ".shinobi" / "live").write_text("")  # no folder to hold markers
    recipe = Recipe("r")
    recipe.add_step("s", Cab("s", ["true"]))
    result = run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    assert result.ok, result.error
    assert any("could not leave its marker" in w for w in result.warnings), result.warnings


def test_runs_lists_the_local_runs_when_the_launches_index_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sudo -u`` keeping root's HOME, or a read-only state directory: ``ninja runs``
    exited 74 and listed nothing, not even this workspace's local runs."""
    recipe = Recipe("r")
    recipe.add_step("s", Cab("s", ["true"]))
    assert run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False})).ok
    (tmp_path / "state").write_text("")  # a file where the state directory must be
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    code, out, err = in_process(capsys, "runs")
    assert code == 0, err
    assert "local runs (ninja run)" in out and " r " in out
    assert "cannot read the launches index" in err and "XDG_STATE_HOME" in err


def test_doctor_warns_of_an_index_of_launches_this_user_cannot_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said nothing, and the next `compile --submit` was refused (74)."""
    (tmp_path / "state").write_text("")  # a file where the state directory must be
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    code, out, err = in_process(capsys, "doctor", "--json")
    assert code == 0, err
    warnings = json.loads(out)["config"]["warnings"]
    assert any("the index of launches in" in w and "XDG_STATE_HOME" in w for w in warnings)
