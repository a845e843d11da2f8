"""``ninja logs --follow`` passes a step's bytes as they are, as ``ninja logs``
does: followed, each line was decoded with replacement characters for what is
not UTF-8 (Latin-1 text, binary output)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from cli_in_process import in_process
from test_launch_fixtures import FakeTarget, engine, launch

__all__ = ["engine"]  # the fixture, imported so pytest finds it

WRITTEN = b"caf\xe9 \xc3\xa9t\xc3\xa9\n\xffbin"

PRINTS = r"""
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe

class In(BaseModel):
    pass

say = Cab("say", ["printf", "caf\\351 \\303\\251t\\303\\251\\n\\377bin"], In, None)
r = Recipe("r")
r.add_step("say", say)
"""


def test_a_followed_launch_log_is_its_bytes(
    engine: type[FakeTarget], tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    handle = launch(tmp_path)
    Path(str(handle.jobs[1].stdout)).write_bytes(WRITTEN)
    engine.rounds = [{"use": "completed"}]
    code, out, err = in_process(capsysbinary, "logs", "pipe", "--follow", "--interval", "0.5")
    assert code == 0, err
    assert out.splitlines() == [
        b"[make stdout] make says hello",
        b"[use stdout] caf\xe9 \xc3\xa9t\xc3\xa9",
        b"[use stdout] \xffbin",
    ]


def test_a_followed_local_run_log_is_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_CONFIG", os.devnull)
    Path("r.py").write_text(textwrap.dedent(PRINTS))
    code, _, err = in_process(capsysbinary, "run", "r.py:r", "--no-cache")
    assert code == 0, err
    (run,) = os.listdir(".shinobi/runs")
    code, plain, err = in_process(capsysbinary, "logs", run, "say", "--stream", "stdout")
    assert (code, plain) == (0, WRITTEN), err
    code, followed, err = in_process(capsysbinary, "logs", run, "--follow")
    assert code == 0, err
    assert followed.splitlines() == [
        b"[say stdout] caf\xe9 \xc3\xa9t\xc3\xa9",
        b"[say stdout] \xffbin",
    ]
