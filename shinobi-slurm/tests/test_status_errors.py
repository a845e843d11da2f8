"""``ninja status`` when Slurm cannot be asked, or the handle is damaged: said, and
an exit status a script can test (no cluster needed: stand-ins on PATH)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import Ninja

REFUSING = '#!/bin/sh\necho "sacct: error: Problem talking to the database" >&2\nexit 1\n'


def handle(tmp_path: Path, job_id: str) -> Path:
    path = tmp_path / "handle.json"
    data = {
        "version": 1,
        "engine": "slurm",
        "recipe": "pipe",
        "run_id": "20261130-000000-abcdef",
        "workdir": str(tmp_path),
        "jobs": [{"step": "make", "job_id": job_id}],
    }
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def unreachable(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sacct", "squeue"):
        (bin_dir / tool).write_text(REFUSING.replace("sacct", tool))
        (bin_dir / tool).chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_a_status_slurm_could_not_give_exits_74(
    ninja: Ninja, tmp_path: Path, unreachable: dict[str, str]
) -> None:
    shown = ninja("status", str(handle(tmp_path, "12")), **unreachable)
    assert shown.returncode == 74, shown.stderr
    assert "could not ask Slurm" in shown.stdout
    assert "Problem talking to the database" in shown.stdout


def test_a_job_id_that_is_not_slurms_is_a_damaged_handle(
    ninja: Ninja, tmp_path: Path, unreachable: dict[str, str]
) -> None:
    for command in ("status", "cancel"):
        said = ninja(command, str(handle(tmp_path, "12;x")), **unreachable)
        assert said.returncode == 2, said.stderr
        assert "names '12;x' as a Slurm job id" in said.stderr
        assert "Traceback" not in said.stderr
