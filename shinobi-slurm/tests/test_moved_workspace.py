"""A launch's records follow the workspace they are found in, moved or copied.

The handle records absolute paths (scripts, logs, ``exits/``) as they were at
submit time. ``ninja clean --launches`` in a copy (``cp -a proj proj-copy``)
deleted the original's launch folder and dropped it from the index, leaving
the copy's; ``ninja status`` in a moved workspace read ``exits/`` at the old
path, missed it and reported Slurm's ``exit 255`` modulo 128, as 127.
``ninja logs`` of a quiet ``--backend slurm`` step blamed a full disk for the
empty logs Slurm makes as a job starts.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import Ninja
from launches import submit, wait_final

pytestmark = pytest.mark.usefixtures("slurm")

QUIET = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    script: str

sh = Cab("sh", ["/bin/sh", "-c"], In, None, {"script": ParamMeta(positional=True)})
quiet = Recipe("quiet", In)
quiet.add_step("s", sh, script=quiet.inputs.script)
"""


def _failed_launch(ninja: Ninja, tmp_path: Path) -> Path:
    """A workspace ``proj`` whose one launch ran a step that exited 255, finished."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "quiet.py").write_text(QUIET)
    launch = submit(ninja, "quiet.py:quiet", "--script", "echo dying >&2; exit 255", cwd=proj)
    assert wait_final(ninja, launch["handle"], cwd=proj)["state"] == "failed"
    return proj


def _files(workspace: Path) -> int:
    return sum(1 for p in (workspace / ".shinobi").rglob("*") if p.is_file())


def test_a_moved_workspace_reports_the_exact_exit_code(ninja: Ninja, tmp_path: Path) -> None:
    proj = _failed_launch(ninja, tmp_path)
    moved = proj.rename(tmp_path / "proj-moved")
    done = ninja("status", "quiet", cwd=moved)
    assert done.returncode == 1, done.stderr
    assert "exited with code 255: dying" in done.stdout, done.stdout


def test_cleaning_a_copy_removes_the_copys_records_not_the_originals(
    ninja: Ninja, tmp_path: Path
) -> None:
    proj = _failed_launch(ninja, tmp_path)
    copy = tmp_path / "proj-copy"
    shutil.copytree(proj, copy, symlinks=True)
    before = _files(proj)
    (next((proj / ".shinobi" / "quiet").glob("*/exits")) / "s").unlink()
    said = ninja("status", "quiet", cwd=copy)
    assert "exited with code 255: dying" in said.stdout, said.stdout  # the copy's exits/ file
    done = ninja("clean", "--launches", cwd=copy)
    assert done.returncode == 0, done.stderr
    assert _files(copy) == 0
    assert _files(proj) == before - 1  # all but the exit file deleted above
    still = ninja("status", "quiet", cwd=proj)
    assert still.returncode == 1 and "dying" in still.stdout, still.stderr


def test_logs_of_a_quiet_slurm_step_say_it_printed_nothing(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "quiet.py").write_text(QUIET)
    done = ninja("run", "quiet.py:quiet", "-b", "slurm", "--script", "true", "--no-cache")
    assert done.returncode == 0, done.stderr
    run = next((tmp_path / ".shinobi" / "runs").iterdir()).name
    logs = tmp_path / ".shinobi" / "runs" / run / "logs"
    assert (logs / "s.out").stat().st_size == 0  # as Slurm made it
    whole = ninja("logs", run)
    assert whole.returncode == 2
    assert "a step that printed nothing has none" in whole.stderr, whole.stderr
    one = ninja("logs", run, "s")
    assert one.returncode == 2 and "printed nothing" in one.stderr, one.stderr
    for said in (whole.stderr, one.stderr):
        assert "full disk" not in said and len(said.splitlines()) == 1
