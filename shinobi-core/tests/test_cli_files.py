"""Files of the user's that `ninja` commands must leave alone or name, and logs
whose writing failed."""

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


# -- 2. and 3. a cache dir that names no directory ------------------------------


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` as cwd, holding a file an `rm --all` there would delete, and no config."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SHINOBI_CACHE_DIR", raising=False)
    mine = tmp_path / "entries" / "ab" / "ab12.json"
    mine.parent.mkdir(parents=True)
    mine.write_text("{}")
    (tmp_path / "somefile").write_text("mine\n")
    return tmp_path


@pytest.mark.parametrize("command", [["ls"], ["rm", "--all"], ["prune"]])
def test_an_empty_cache_dir_option_is_refused_not_the_current_directory(
    workspace: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """`--cache-dir "$UNSET"` listed "1 entry in ." and `rm --all` deleted ./entries/...,
    where SHINOBI_CACHE_DIR= and cache.dir = "" are refused."""
    code, out, err = ninja(capsys, "cache", *command, "--cache-dir", "")
    assert code == 2, out + err
    assert "--cache-dir is empty; name a directory" in err and len(err.splitlines()) == 1
    assert (workspace / "entries" / "ab" / "ab12.json").exists()


@pytest.mark.parametrize("command", [["ls"], ["rm", "--all"], ["prune"]])
def test_a_cache_dir_under_a_file_is_refused_naming_the_file(
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    """SHINOBI_CACHE_DIR=somefile/sub said "the step cache ... is empty", exit 0: a
    directory that cannot exist is a setting to mend, as one that is a file."""
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(workspace / "somefile" / "sub"))
    code, out, err = ninja(capsys, "cache", *command)
    assert code == 2, out + err
    assert f"cannot be a directory: {workspace / 'somefile'} is a file" in err
    assert "SHINOBI_CACHE_DIR" in err and "empty" not in out + err
    monkeypatch.delenv("SHINOBI_CACHE_DIR")
    code, out, err = ninja(capsys, "cache", *command, "--cache-dir", "somefile/sub")
    assert code == 2 and f"({workspace / 'somefile'} is a file)" in err


# -- 4. the logs of a run whose steps came from a run since removed ---------------

CACHED = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta

class I(BaseModel):
    msg: str = "hello from the first run"

say = Cab("say", ["echo"], I, None, {"msg": ParamMeta(positional=True)})
"""


def test_logs_of_a_run_served_by_a_removed_run_say_it_is_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ninja logs NEWRUN` pointed to `ninja logs X` for run X that `clean --runs` had
    removed, where `ninja logs NEWRUN STEP` said X is not here."""
    from shinobi.local_runs import local_runs, remove_run

    (tmp_path / "r.py").write_text(CACHED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / "cache"))
    assert ninja(capsys, "run", "r.py:say")[0] == 0
    (first,) = local_runs(tmp_path)
    assert ninja(capsys, "run", "r.py:say")[0] == 0
    (second,) = [run for run in local_runs(tmp_path) if run.run_id != first.run_id]
    code, _, err = ninja(capsys, "logs", second.run_id)
    assert code == 2 and f"(`ninja logs {first.run_id}` shows what they printed)" in err
    remove_run(first)
    code, _, err = ninja(capsys, "logs", second.run_id)
    assert code == 2 and len(err.splitlines()) == 1
    assert f"run {first.run_id} is not here (removed by `ninja clean --runs`" in err
    assert "shows what they printed" not in err


# -- 5. a log the disk refused ---------------------------------------------------------


def _run_with_refused_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run folder whose step 'after' wrote its stdout to a full disk (/dev/full), left
    as the 0-byte log a full disk leaves; the run ended as a run does."""
    from shinobi.backends.streams import StreamLog
    from shinobi.local_runs import hold_run, release_run, runs_root

    monkeypatch.chdir(tmp_path)
    folder = runs_root(tmp_path) / "20261202-120000-abcdef"
    (folder / "logs").mkdir(parents=True)
    held = hold_run(folder, "full")
    log = folder / "logs" / "after.out"
    log.symlink_to("/dev/full")
    warned: list[str] = []
    stream = StreamLog(str(log), warned.append)
    stream.write(b"after says hello\n")
    stream.close()
    release_run(held, "ok")
    assert warned and "No space left on device" in warned[0]
    log.unlink()
    log.write_bytes(b"")
    return folder


def test_logs_of_a_step_whose_log_the_disk_refused_say_it_was_cut_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run folder did not record that the log was incomplete, and `ninja logs RUN
    after` said "kept no logs of a step 'after'; did you mean 'after'?"."""
    folder = _run_with_refused_log(tmp_path, monkeypatch)
    code, out, err = ninja(capsys, "logs", folder.name, "after")
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "did you mean" not in err
    assert f"writing its log {folder / 'logs' / 'after.out'} failed" in err
    assert "No space left on device" in err


def test_a_log_cut_off_part_way_is_shown_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _run_with_refused_log(tmp_path, monkeypatch)
    (folder / "logs" / "after.out").write_bytes(b"the first half\n")
    code, out, err = ninja(capsys, "logs", folder.name, "after")
    assert code == 0 and out == "the first half\n"
    assert f"the log {folder / 'logs' / 'after.out'} was cut off by a write error" in err


def test_an_empty_log_no_record_explains_is_not_offered_as_its_own_correction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose record could not note the failure either: the step's name is not
    suggested back; the empty log is said to be one. (No record of a failed write,
    so it is not blamed on one: Slurm leaves such logs for every quiet step.)"""
    folder = _run_with_refused_log(tmp_path, monkeypatch)
    (folder / ".running").write_text('{"recipe": "full", "ended": true, "status": "ok"}')
    code, _, err = ninja(capsys, "logs", folder.name, "after")
    assert code == 2 and "did you mean" not in err
    assert f"kept no logs (its log {folder / 'logs' / 'after.out'} is empty)" in err
