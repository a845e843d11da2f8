"""``ninja doctor`` says what a run would: a default backend that cannot run a step
is a problem (exit 2)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def test_a_default_venv_that_does_not_exist_is_a_problem(ninja: Ninja, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "venv"
    env = {
        "SHINOBI_BACKEND_DEFAULT": "venv",
        "SHINOBI_BACKEND_VENV": str(missing),
    }
    proc = ninja("doctor", env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    problems = [x for x in proc.stdout.splitlines() if x.startswith("  problem: ")]
    assert problems == [
        f"  problem: backend.default is 'venv', which cannot be used: the venv '{missing}'"
        f" does not exist; create it with `python3 -m venv {missing}`"
    ]
