"""``ninja`` started with its standard streams closed (cron, a daemon, ``>&-``): a run
still runs, and what could not be printed is said on stderr, not lost unremarked."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

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
