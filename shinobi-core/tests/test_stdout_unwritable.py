"""A standard output that refuses a write (``> out.txt`` on a full disk, an I/O
error) is named as such, and takes nothing from a run's own exit status.

Both ``ninja run fail.py:fl --json > /dev/full`` (its step failed) and a run
that succeeded exited 74 with "No space left on device (free some space
there)": the failure read as a full disk, the success as a failure, and a
wrapper that retries on 74 ran the whole pipeline again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")

RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    script: str = "touch made.txt"
    made: Path = Path("made.txt")

class Out(BaseModel):
    made: Path | None = None

sh = Cab("sh", ["/bin/sh", "-c"], In, Out, {"script": ParamMeta(positional=True),
         "made": ParamMeta(skip=True)})

pipe = Recipe("pipe", In, Out)
pipe.add_step("sh", sh, script=pipe.inputs.script, made=pipe.inputs.made)
pipe.set_output("made", pipe.outputs.sh.made)
"""

FULL = "cannot write to standard output: No space left on device"


def _into_full_disk(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``ninja ARGS > /dev/full``."""
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [sys.executable, "-m", "shinobi.cli", *args],
            cwd=tmp_path,
            env={**os.environ, "SHINOBI_CACHE_DIR": str(tmp_path / "cache")},
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )


@pytest.mark.parametrize(
    ("args", "status", "kept"),
    [
        (["--json", "--script", "echo boom >&2; exit 3"], 1, "the run's records are in"),
        (["--json"], 0, "the run's records are in"),
        ([], 0, "the run's records are in"),  # `made = made.txt`, for people
        (["--provenance"], 0, "the run's result is in its manifest"),
    ],
    ids=["failed-json", "succeeded-json", "succeeded-plain", "manifest"],
)
def test_a_run_keeps_its_status_and_says_where_its_result_is(
    tmp_path: Path,
    recipe_file: Callable[..., Path],
    args: list[str],
    status: int,
    kept: str,
) -> None:
    path = recipe_file(RECIPE)
    proc = _into_full_disk(tmp_path, "run", f"{path}:pipe", *args)
    assert proc.returncode == status, proc.stderr
    [run] = (tmp_path / ".shinobi" / "runs").iterdir()
    assert f"ninja: warning: {FULL}; {kept}" in proc.stderr
    assert str(run) in proc.stderr
    assert "free some space there" not in proc.stderr


@pytest.mark.parametrize(
    "args",
    [["runs"], ["graph", "RECIPE:pipe", "--format", "dot"], ["--help"], ["run", "--help"]],
    ids=["runs", "graph", "help", "click-help"],
)
def test_a_command_whose_output_is_its_result_fails_naming_stdout(
    tmp_path: Path, recipe_file: Callable[..., Path], args: list[str]
) -> None:
    path = recipe_file(RECIPE)
    proc = _into_full_disk(tmp_path, *(a.replace("RECIPE", str(path)) for a in args))
    assert proc.returncode == 74
    assert proc.stderr == f"ninja: error: {FULL}\n"
