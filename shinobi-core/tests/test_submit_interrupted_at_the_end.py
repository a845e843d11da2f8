"""A stop that comes as the last job of ``ninja compile --submit`` is handed over.

Every job was submitted and would run, yet ninja printed only "ninja:
aborted" (exit 130): a user who read that nothing was submitted submitted
again, and two launches wrote the same paths.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process as ninja
from test_launch_fixtures import FakeTarget, engine

from shinobi.cli import compile as compile_command

__all__ = ["engine"]  # the fixture, imported so pytest finds it

DEMO = Path(__file__).resolve().parents[2] / "examples" / "offload_demo.py"
SAID = "ninja: interrupted while submitting: 2 of 2 jobs were handed to fake and will run;"


def _submit(capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--submit")


def test_a_stop_as_the_last_job_is_recorded_says_every_job_was_handed_over(
    engine: type[FakeTarget], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = FakeTarget.submit

    def submit(self: FakeTarget, *args: Any) -> None:
        real(self, *args)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(FakeTarget, "submit", submit)
    code, out, err = _submit(capsys)
    assert code == 130, err
    assert SAID in err and "ninja: aborted" not in err
    assert "pipe" in out  # the launch, as a submission that was not stopped prints it


def test_a_stop_while_the_launch_is_printed_says_so_after_it(
    engine: type[FakeTarget], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = compile_command._print_launch

    def printed(*args: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # (a SIGTERM unhandled would end pytest)
        real(*args)

    monkeypatch.setattr(compile_command, "_print_launch", printed)
    code, _, err = _submit(capsys)
    assert code == 130, err
    assert err.rstrip().endswith(f"{SAID} `ninja cancel {_run_id(err)}` stops them")


def _run_id(err: str) -> str:
    return err.rsplit("`ninja cancel ", 1)[1].split("`")[0]
