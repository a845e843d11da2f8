"""A launch's records are read and cleaned where they are found, not where they were made.

A handle records absolute paths. In a copied workspace (``cp -a proj copy``)
they still named the original's files: ``ninja clean --launches`` in the copy
deleted the original's launch, and status read the original's ``exits/``.
``ninja logs`` of a quiet ``--backend slurm`` step blamed a full disk for the
empty logs Slurm makes as each job starts.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_in_process import in_process as ninja
from test_launch_fixtures import FakeTarget, engine, launch

from shinobi.errors import UsageError
from shinobi.launch.cleanup import remove_launch
from shinobi.launch.handle import LaunchJob, read_handle, write_handle

__all__ = ["engine"]

RUN = "20261203-065909-01f9b2"


def _with_exit_files(workdir: Path) -> Path:
    """A launch as an older ninja wrote it: every path absolute, an exit file kept."""
    handle = launch(workdir, run_id=RUN)
    exits = handle.run_dir / "exits"
    exits.mkdir()
    (exits / "make").write_text("255\n")
    for job in handle.jobs:
        job.details = {"exit_code": str(exits / job.step), "until": "/data/converged"}
    write_handle(handle)
    return handle.run_dir


def _files(workdir: Path) -> list[str]:
    root = workdir / ".shinobi"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_handle_read_in_a_copy_names_the_copys_files(
    engine: type[FakeTarget], tmp_path: Path
) -> None:
    proj, copy = tmp_path / "proj", tmp_path / "copy"
    _with_exit_files(proj)
    shutil.copytree(proj, copy)
    for found in (copy / ".shinobi" / "pipe" / "handle.json", copy / ".shinobi" / "pipe" / RUN):
        handle = read_handle(found if found.is_file() else found / "handle.json")
        assert handle.workdir == str(copy.resolve())
        make = handle.jobs[0]
        assert make.stdout == str(copy.resolve() / ".shinobi" / "pipe" / RUN / "logs/make.out")
        assert make.details["exit_code"] == str(handle.run_dir / "exits" / "make")
        assert make.details["until"] == "/data/converged"  # the user's, not the run's


def test_clean_launches_in_a_copy_leaves_the_original_alone(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proj, copy = tmp_path / "proj", tmp_path / "copy"
    _with_exit_files(proj)
    shutil.copytree(proj, copy)
    before = _files(proj)
    code, out, err = ninja(capsys, "clean", "--launches", "--workdir", str(copy))
    assert code == 0, err
    assert f"removed pipe/{RUN}" in out
    assert _files(copy) == [] and _files(proj) == before
    code, out, err = ninja(capsys, "status", "pipe", "--workdir", str(proj))
    assert code == 0 and RUN in out, err


def test_a_launch_outside_the_workspace_is_refused_not_deleted(
    engine: type[FakeTarget], tmp_path: Path
) -> None:
    proj, elsewhere = tmp_path / "proj", tmp_path / "elsewhere"
    elsewhere.mkdir()
    handle = read_handle(_with_exit_files(proj) / "handle.json")
    with pytest.raises(UsageError, match=r"is not under .*the workspace being cleaned"):
        remove_launch(handle, workspace=elsewhere)
    assert (handle.run_dir / "exits" / "make").is_file()


def test_a_handle_read_where_it_was_made_is_unchanged(
    engine: type[FakeTarget], tmp_path: Path
) -> None:
    run_dir = _with_exit_files(tmp_path / "proj")
    handle = read_handle(run_dir / "handle.json")
    assert handle.jobs[0] == LaunchJob(
        step="make",
        job_id="1",
        stdout=str(run_dir / "logs" / "make.out"),
        details={"exit_code": str(run_dir / "exits" / "make"), "until": "/data/converged"},
    )
