"""``ninja report -o`` given a folder's name that is not there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HI = """\
import shinobi

@shinobi.pystep
def hi(x: int = 1) -> int:
    return x
"""


def ninja(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHINOBI_CONFIG": os.devnull}
    env["SHINOBI_CACHE_DIR"] = str(cwd / "cache")
    return subprocess.run(
        [sys.executable, "-m", "shinobi.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("report_out")
    (project / "hi.py").write_text(HI)
    assert ninja(project, "run", "hi.py:hi", "--provenance").returncode == 0
    (found,) = (project / ".shinobi" / "runs").iterdir()
    return found


def test_an_output_ending_in_a_slash_is_a_folder_that_is_not_there(run_dir: Path) -> None:
    """``-o reports/`` wrote an HTML file called ``reports``, exit 0."""
    project = run_dir.parents[2]
    made = ninja(project, "report", run_dir.name, "-o", "reports/")
    assert made.returncode == 2, made.stderr
    assert made.stderr.count("\n") == 1 and "reports/ names a folder" in made.stderr
    assert not (project / "reports").exists()


def test_an_empty_output_is_refused_not_the_current_directory(run_dir: Path) -> None:
    """``-o "$UNSET"`` tried to write the report over the current directory (exit 74)."""
    made = ninja(run_dir.parents[2], "report", run_dir.name, "-o", "")
    assert made.returncode == 2 and "an empty path names no file" in made.stderr


def test_a_file_in_a_folder_that_is_there_is_still_written(run_dir: Path) -> None:
    project = run_dir.parents[2]
    (project / "out").mkdir()
    made = ninja(project, "report", run_dir.name, "-o", "out/r.html")
    assert made.returncode == 0 and (project / "out" / "r.html").is_file()
