"""``ninja cancel`` of a running local run said only "Ctrl-C in the terminal of its
ninja run", which cannot reach a run started in the background or under nohup
(SIGINT ignored): it names the pid that ``kill -TERM`` stops, as ``ninja runs`` does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_in_process import in_process as ninja

from shinobi.local_runs import hold_run, release_run, runs_root

RUN_ID = "20261202-120000-abcdef"


def test_cancel_and_runs_name_the_pid_of_a_running_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = runs_root(tmp_path) / RUN_ID
    (folder / "logs").mkdir(parents=True)
    held = hold_run(folder, "nap")  # this process is the run's ninja
    try:
        code, _, err = ninja(capsys, "cancel", RUN_ID)
        assert code == 2
        assert (
            f"run {RUN_ID} is running: Ctrl-C in the terminal of its `ninja run`, or"
            f" `kill -TERM {os.getpid()}`, stops it"
        ) in err
        code, out, _ = ninja(capsys, "runs")
        assert code == 0 and f"running (pid {os.getpid()})" in out
    finally:
        release_run(held, "ok")
    code, _, err = ninja(capsys, "cancel", RUN_ID)  # ended: no pid to kill
    assert "kill" not in err and "has ended: there is nothing to cancel" in err
