"""Run folders on a file system that takes no locks (Lustre without ``flock``, NFS
without a lock daemon): a run in progress must still read as running, so that
``ninja clean --runs`` keeps its logs."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import shinobi.local_runs as local_runs_module
from shinobi.cli.clean import command as clean_command
from shinobi.local_runs import hold_run, is_running, local_runs, release_run, runs_root


@pytest.fixture
def no_locks(monkeypatch: pytest.MonkeyPatch) -> None:
    """``flock`` fails as it does where the file system takes no locks."""

    def refuse(fd: int, operation: int) -> None:
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(local_runs_module.fcntl, "flock", refuse)


def _run_dir(workdir: Path, run_id: str = "20260101-000000-aaaaaa") -> Path:
    run_dir = runs_root(workdir) / run_id
    (run_dir / "logs").mkdir(parents=True)
    (run_dir / "logs" / "image.out").write_text("12 hours of imaging so far\n")
    return run_dir


@pytest.mark.usefixtures("no_locks")
def test_a_run_going_on_without_locks_is_running_and_clean_keeps_it(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path)
    held = hold_run(run_dir, "selfcal")
    try:
        assert is_running(run_dir)
        assert [r.state for r in local_runs(tmp_path)] == ["running"]
        result = CliRunner().invoke(clean_command, ["--runs", "--workdir", str(tmp_path)])
        assert result.exit_code == 0, result.output
        assert (run_dir / "logs" / "image.out").exists()
        assert "still running" in result.output
    finally:
        release_run(held, "ok")
    assert not is_running(run_dir)
    assert [r.state for r in local_runs(tmp_path)] == ["ok"]


@pytest.mark.usefixtures("no_locks")
def test_an_unlocked_run_whose_ninja_died_ended_abruptly(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    held = hold_run(run_dir, "selfcal")
    assert held is not None
    record: dict[str, Any] = json.loads((run_dir / ".running").read_text())
    record["pid"] = int(dead.stdout)  # as if that ninja had been SIGKILLed
    (run_dir / ".running").write_text(json.dumps(record))
    local_runs_module._HELD.pop(held, None)
    local_runs_module.os.close(held)
    assert not is_running(run_dir)
    assert [r.state for r in local_runs(tmp_path)] == [local_runs_module.ENDED_ABRUPTLY]


@pytest.mark.usefixtures("no_locks")
def test_an_unlocked_run_of_another_host_is_kept(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path)
    record = {"recipe": "selfcal", "pid": 1, "started": 1.0, "unlocked": True, "host": "node042"}
    (run_dir / ".running").write_text(json.dumps(record))
    assert is_running(run_dir)  # a node's run cannot be asked about from here


def _killed_run(workdir: Path, run_id: str) -> Path:
    """A run folder as a SIGKILLed ninja leaves it: its record, no end, no lock."""
    run_dir = _run_dir(workdir, run_id)
    (run_dir / ".running").write_text('{"recipe": "selfcal", "pid": 1, "started": 1.0}')
    return run_dir


def test_clean_keeps_a_run_that_ended_abruptly_just_now(tmp_path: Path) -> None:
    # Its ninja was SIGKILLed; a Slurm job it submitted still runs and writes its
    # log into this folder. `ninja clean --runs` right after must not delete it.
    run_dir = _killed_run(tmp_path, "20260101-000000-aaaaaa")
    result = CliRunner().invoke(clean_command, ["--runs", "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (run_dir / "logs" / "image.out").exists()
    assert "ended abruptly" in result.output and "--older-than 1h" in result.output
    assert "removed 0 run folder(s)" in result.output


def test_clean_removes_a_quiet_abruptly_ended_run_or_when_told(tmp_path: Path) -> None:
    import os
    import time

    old = _killed_run(tmp_path, "20260101-000000-aaaaaa")
    then = time.time() - 7200
    for path in (old, old / "logs", old / "logs" / "image.out", old / ".running"):  # all of it
        os.utime(path, (then, then))
    fresh = _killed_run(tmp_path, "20260101-000001-bbbbbb")
    result = CliRunner().invoke(clean_command, ["--runs", "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert not old.exists() and fresh.exists()
    told = CliRunner().invoke(
        clean_command, ["--runs", "--older-than", "0", "--workdir", str(tmp_path)]
    )
    assert told.exit_code == 0, told.output
    assert not fresh.exists()


def test_clean_keeps_a_killed_run_whose_batch_jobs_may_run_on_however_quiet(
    tmp_path: Path,
) -> None:
    # `ninja run --backend slurm` SIGKILLed: its jobs (listed in slurm/jobs.tsv)
    # may run for days and print nothing for hours; after one quiet hour the
    # folder, with the only list of them, was removed. Here the backend that
    # listed them cannot be asked (not installed): they are taken to run on
    # (test_left_jobs has a backend that answers).
    import os
    import time

    from shinobi.local_runs import JOBS_LEDGER

    run_dir = _killed_run(tmp_path, "20260101-000000-aaaaaa")
    (run_dir / "nosuchbatch").mkdir()
    (run_dir / "nosuchbatch" / JOBS_LEDGER).write_text("4242\tcalibrate\n")
    then = time.time() - 3 * 86400
    for path in (run_dir, run_dir / "logs", run_dir / "logs" / "image.out", run_dir / ".running"):
        os.utime(path, (then, then))
    result = CliRunner().invoke(clean_command, ["--runs", "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert run_dir.exists()
    assert "after starting batch jobs, listed in nosuchbatch/jobs.tsv there" in result.output
    assert "--older-than 1h" in result.output and "removed 0 run folder(s)" in result.output
    told = CliRunner().invoke(
        clean_command, ["--runs", "--older-than", "1h", "--workdir", str(tmp_path)]
    )
    assert told.exit_code == 0, told.output
    assert not run_dir.exists()
