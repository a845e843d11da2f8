"""``ninja logs`` of a step that printed nothing, whose logs are there but empty.

Slurm makes a job's ``--output`` and ``--error`` files as the job starts, so a
quiet ``--backend slurm`` step leaves two empty logs where a native step
leaves none. ``ninja logs`` took an empty log for a write that failed ("a full
disk?"); only the run's record of a failed write (``cut_logs``) says that.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process as ninja

from shinobi.local_runs import hold_run, note_steps, release_run, runs_root

RUN = "20261203-065853-1af107"


def _quiet_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ended run of one step 's' whose logs Slurm made and nothing was written to."""
    folder, held = _held_quiet_run(tmp_path, monkeypatch)
    release_run(held, "ok")
    return folder


def _held_quiet_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, int | None]:
    """That run still going (held by this process: the caller releases it)."""
    monkeypatch.chdir(tmp_path)
    folder = runs_root(tmp_path) / RUN
    (folder / "logs").mkdir(parents=True)
    held = hold_run(folder, "rec")
    note_steps(folder, ["s"])
    for stream in ("out", "err"):
        (folder / "logs" / f"s.{stream}").write_bytes(b"")
    return folder, held


def test_a_quiet_run_with_empty_logs_printed_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _quiet_run(tmp_path, monkeypatch)
    code, out, err = ninja(capsys, "logs", RUN)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert f"run {RUN} kept no logs (a step that printed nothing has none" in err
    assert "full disk" not in err


def test_a_quiet_step_with_empty_logs_printed_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _quiet_run(tmp_path, monkeypatch)
    for stream in ("both", "stdout", "stderr"):
        code, out, err = ninja(capsys, "logs", RUN, "s", "--stream", stream)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert (
            f"step 's' of run {RUN} printed nothing, so it kept no logs (its log {folder / 'logs'}"
            in err
        )
        assert "full disk" not in err and "kept a" not in err


def test_a_step_that_printed_to_one_stream_only_names_that_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _quiet_run(tmp_path, monkeypatch)
    (folder / "logs" / "s.err").write_bytes(b"said\n")
    code, _, err = ninja(capsys, "logs", RUN, "s", "--stream", "stdout")
    assert code == 2 and "printed nothing to stdout; it kept a stderr log" in err, err


def test_a_quiet_run_still_going_has_printed_nothing_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, held = _held_quiet_run(tmp_path, monkeypatch)
    try:
        code, _, err = ninja(capsys, "logs", RUN, "s")
    finally:
        release_run(held, "ok")
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"has printed nothing yet (the run is still going; `ninja logs --follow {RUN} s`" in err
