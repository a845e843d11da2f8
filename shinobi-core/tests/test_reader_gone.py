"""A reader that goes away while ninja prints (``| head -1``, ``| grep -q``) ends
the printing, never the status a command had settled on: a failed run exited 0
when writing its failed step's stderr tail met a closed pipe."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_launch_fixtures import FakeTarget, engine, launch

from shinobi.cli.main import main

__all__ = ["engine"]  # the fixture, imported so pytest finds it

FAIL = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta

class In(BaseModel):
    script: str

class Out(BaseModel):
    pass

sh = Cab("sh", ["/bin/sh", "-c"], In, Out, {"script": ParamMeta(positional=True)})
"""


def _ninja(tmp_path: Path, *args: str, **streams: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "shinobi.cli", *args],
        cwd=tmp_path,
        env={**os.environ, "SHINOBI_CACHE_DIR": str(tmp_path / "cache")},
        **streams,  # type: ignore[call-overload]
    )


def _first_line_then_gone(proc: subprocess.Popen[bytes]) -> int:
    """What `ninja ... 2>&1 | head -1` does: one line read, then the pipe closed."""
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()
    return proc.wait(timeout=60)


@pytest.mark.parametrize(
    ("script", "status"),
    [
        # the tail of the step's stderr is written after the reader has gone
        ("sleep .5; echo boom >&2; exit 3", 1),
        ("sleep .5; echo fine >&2", 0),  # nothing to report: still 0
    ],
    ids=["failed-exits-1", "succeeded-exits-0"],
)
def test_a_run_keeps_its_status_when_its_reader_left(
    tmp_path: Path, recipe_file: Callable[..., Path], script: str, status: int
) -> None:
    path = recipe_file(FAIL)
    proc = _ninja(
        tmp_path,
        "run",
        f"{path}:sh",
        "--script",
        script,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert _first_line_then_gone(proc) == status


def test_a_failed_run_with_its_stderr_closed_from_the_start(
    tmp_path: Path, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(FAIL)
    proc = _ninja(
        tmp_path,
        "run",
        f"{path}:sh",
        "--script",
        "echo boom >&2; exit 3",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    proc.stderr.close()
    assert proc.wait(timeout=60) == 1


def test_doctor_that_found_a_problem_exits_2_when_its_reader_left(tmp_path: Path) -> None:
    (tmp_path / "shinobi.toml").write_text('[backend]\ndefault = "kubernetes"\n')
    proc = _ninja(
        tmp_path,
        "doctor",
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # gone before doctor writes a word
    assert proc.wait(timeout=60) == 2


class _GoneReader(io.StringIO):
    """A stdout whose reader went away: every write meets a closed pipe."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no file descriptor")


def test_status_of_a_failed_launch_exits_1_when_its_reader_left(
    engine: type[FakeTarget], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch(tmp_path)
    engine.rounds = [{"make": "completed", "use": "failed"}]
    monkeypatch.setattr(sys, "stdout", _GoneReader())
    monkeypatch.setattr(sys, "stderr", sys.stderr)  # click wraps both when a pipe breaks
    with pytest.raises(SystemExit) as ended:
        main(["status", "pipe"])
    assert ended.value.code == 1
