"""Files of the user's that `ninja` commands must leave alone or name, and logs
whose writing failed (audit 22)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process as ninja
from test_launch_fixtures import FakeTarget, engine, launch

__all__ = ["engine"]


# -- 1. a handle.json under .shinobi/runs is no launch ------------------------


def test_clean_launches_force_leaves_a_users_folder_under_runs_alone(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`clean --launches --force` removed .shinobi/runs/mystuff (notes and all) as
    "the damaged launch handle", though `clean --runs` calls it the user's folder:
    no launch ever lives under .shinobi/runs."""
    launch(tmp_path, run_id="good")
    mine = tmp_path / ".shinobi" / "runs" / "mystuff"
    mine.mkdir(parents=True)
    (mine / "notes").write_text("mine\n")
    (mine / "handle.json").write_text("{broken")
    code, out, err = ninja(capsys, "runs")
    assert "mystuff/handle.json" not in out + err
    code, out, err = ninja(capsys, "clean", "--launches", "--force")
    assert code == 0, err
    assert "removed pipe/good" in out and "mystuff" not in out + err
    assert (mine / "notes").read_text() == "mine\n" and (mine / "handle.json").exists()
