"""``ninja cancel`` of a launch still being submitted stops the submitter too.

It cancelled the jobs on record when it came and said the submitter had
stopped; the submitter went on, and every job it handed over afterwards ran
(14 of 20 on a controller answering sbatch in 0.3 s). ``ninja status`` said
the same, and counted the steps not handed over yet as cancelled.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import Ninja, ninja_argv
from launches import status, steps

pytestmark = pytest.mark.usefixtures("slurm")

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    secs: str

sleep = Cab("sleep", "/bin/sleep", In, field_meta={"secs": ParamMeta(positional=True)})
slow = Recipe("slow")
for i in range(10):
    slow.add_step(f"s{i}", sleep, secs=f"{60 + i / 100}")
"""

#: sbatch as a busy controller answers it: each submission takes a while.
SLOW_SBATCH = '#!/bin/bash\nsleep 0.5\nexec sbatch "$@"\n'


def _queued(name: str) -> list[str]:
    out = subprocess.run(
        ["squeue", "-h", "-t", "PD,R", "-n", name, "-o", "%i"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


def test_cancel_stops_a_launch_that_is_still_being_submitted(
    ninja: Ninja, tmp_path: Path, env: dict[str, str]
) -> None:
    (tmp_path / "slow.py").write_text(RECIPE)
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "sbatch").write_text(SLOW_SBATCH.replace("exec sbatch", f"exec {_sbatch()}"))
    (shim / "sbatch").chmod(0o755)
    submitting = subprocess.Popen(
        [*ninja_argv(), "compile", "slow.py:slow", "--submit"],
        cwd=tmp_path,
        env={**env, "PATH": f"{shim}:{env['PATH']}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    handle = _first_job_on_record(tmp_path / ".shinobi" / "slow", submitting)
    try:
        found = status(ninja, str(handle))
        by_step = steps(found)
        waiting = [s for s in by_step.values() if s["job_id"] is None]
        assert waiting and all(s["phase"] == "pending" for s in waiting), by_step
        assert found["exit"] == 0  # nothing failed or was cancelled
        said = ninja("cancel", str(handle))
        assert said.returncode == 0, said.stderr
        assert "its submitter (pid" in said.stdout and "was still submitting" in said.stdout
        _, err = submitting.communicate(timeout=120)
        assert submitting.returncode == 1, err
        assert "was cancelled (`ninja cancel`) while it was being submitted" in err
        name = json.loads(handle.read_text())["extra"]["job_name"]
        deadline = time.monotonic() + 15  # scancel is asynchronous: the queue says so later
        while _queued(name) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _queued(name) == []  # nothing the submitter handed over runs on
        unsent = [s for s in steps(status(ninja, str(handle))).values() if s["job_id"] is None]
        assert unsent and {s["detail"] for s in unsent} == {
            "never submitted (cancelled while submitting)"
        }
    finally:
        if submitting.poll() is None:
            submitting.kill()
            submitting.communicate()
        ninja("cancel", str(handle))


def _sbatch() -> str:
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        found = Path(folder) / "sbatch"
        if found.is_file():
            return str(found)
    return "/usr/bin/sbatch"


def _first_job_on_record(launches: Path, submitting: subprocess.Popen[str]) -> Path:
    """The launch's own handle once the submitter has recorded its first job."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert submitting.poll() is None, submitting.communicate()
        for journal in launches.glob("*/submitted.jsonl"):
            if journal.read_text().strip():
                return journal.parent / "handle.json"
        time.sleep(0.1)
    raise AssertionError("the submitter recorded no job in 60 s")


FILLS = """
import errno, pathlib, sys
written = pathlib.Path.write_text
count = [0]
def write_text(self, *args, **kwargs):
    if self.suffix == ".sbatch":
        count[0] += 1
        if count[0] == 3:  # the disk fills as the third job's script is written
            raise OSError(errno.ENOSPC, "No space left on device")
    return written(self, *args, **kwargs)
pathlib.Path.write_text = write_text
sys.argv = ["ninja", "compile", "slow.py:slow", "--submit"]
from shinobi.cli.console import main
main()
"""


def test_a_disk_that_fills_while_submitting_cancels_what_was_submitted(
    ninja: Ninja, tmp_path: Path, env: dict[str, str]
) -> None:
    """The two jobs already handed over were left running, unsaid, and the failure
    read as a fault of shinobi-slurm (exit 1): a resubmit ran them twice."""
    import sys

    (tmp_path / "slow.py").write_text(RECIPE)
    done = subprocess.run(
        [sys.executable, "-c", FILLS], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 74, done.stderr
    assert "cannot write the job script" in done.stderr and "No space left" in done.stderr
    assert "the 2 job(s) already submitted were cancelled" in done.stderr
    assert "report it" not in done.stderr
    (handle,) = (tmp_path / ".shinobi" / "slow").glob("*/handle.json")
    name = json.loads(handle.read_text())["extra"]["job_name"]
    deadline = time.monotonic() + 15
    while _queued(name) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _queued(name) == []
