"""``ninja`` started with its standard streams closed (cron, a daemon, ``>&-``): a run
still runs, and what could not be printed is said on stderr, not lost unremarked."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta

class I(BaseModel):
    out: str = "made.txt"

class O(BaseModel):
    pass

make = Cab("make", ["touch"], I, O, {"out": ParamMeta(positional=True)})
"""


def test_a_run_with_stdout_and_stderr_closed_does_its_work(tmp_path: Path) -> None:
    (tmp_path / "r.py").write_text(RECIPE)
    ninja = shutil.which("ninja", path=str(Path(sys.executable).parent))
    assert ninja is not None
    proc = subprocess.run(
        ["sh", "-c", f"'{ninja}' run r.py:make --no-cache >&- 2>&-"], cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0
    assert (tmp_path / "made.txt").exists()


def _with_stdout_closed(tmp_path: Path, args: str) -> subprocess.CompletedProcess[str]:
    """``ninja ARGS >&-``, its stderr captured."""
    ninja = shutil.which("ninja", path=str(Path(sys.executable).parent))
    assert ninja is not None
    return subprocess.run(
        ["sh", "-c", f"'{ninja}' {args} >&-"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


def test_a_run_whose_stdout_is_closed_says_its_result_went_nowhere(tmp_path: Path) -> None:
    """Its JSON result went nowhere, and nothing said so."""
    (tmp_path / "r.py").write_text(RECIPE)
    proc = _with_stdout_closed(tmp_path, "run r.py:make --no-cache --json")
    assert proc.returncode == 0  # the run's own status: it succeeded
    [run] = (tmp_path / ".shinobi" / "runs").iterdir()
    assert (
        "ninja: warning: cannot write to standard output: it is closed;"
        f" the run's records are in {run}"
    ) in proc.stderr


def test_a_command_whose_output_is_its_result_fails_when_stdout_is_closed(
    tmp_path: Path,
) -> None:
    proc = _with_stdout_closed(tmp_path, "runs")
    assert proc.returncode == 74
    assert proc.stderr == "ninja: error: cannot write to standard output: it is closed\n"


FAILING = """
from pydantic import BaseModel
from shinobi.steps import Cab

class I(BaseModel):
    pass

class O(BaseModel):
    pass

fail = Cab("fail", ["sh", "-c", "echo the calibration diverged >&2; exit 3"], I, O)
nap = Cab("nap", ["sh", "-c", "touch started; sleep 60"], I, O)
"""


@pytest.mark.parametrize("stderr", ["2>&-", "2>/dev/full"])
@pytest.mark.parametrize("debug", ["", "--debug"])
def test_a_failed_run_exits_1_whatever_its_stderr_refuses(
    tmp_path: Path, stderr: str, debug: str
) -> None:
    """Its last lines raised on a closed or full stderr: 70 ("internal error",
    said nowhere) or 74, and with --debug 1, so a wrapper retrying on 74 ran it again."""
    if stderr == "2>/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("this host has no /dev/full")
    (tmp_path / "r.py").write_text(FAILING)
    ninja = shutil.which("ninja", path=str(Path(sys.executable).parent))
    command = f"'{ninja}' {debug} run r.py:fail --no-cache {stderr}"
    proc = subprocess.run(["sh", "-c", command], cwd=tmp_path, timeout=120)
    assert proc.returncode == 1


def test_an_interrupted_run_with_stderr_closed_exits_130(tmp_path: Path) -> None:
    (tmp_path / "r.py").write_text(FAILING)
    ninja = shutil.which("ninja", path=str(Path(sys.executable).parent))
    proc = subprocess.Popen(
        ["sh", "-c", f"exec '{ninja}' run r.py:nap --no-cache 2>&-"], cwd=tmp_path
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
