"""Shared fixtures: the live cluster gate, and ``ninja`` run as a user would run it.

Live tests call the ``slurm`` fixture: it skips them when Slurm is not
reachable here, and fails them in CI (``CI=true``), where the testbed must
have brought it up. ``ninja`` runs the real CLI in a subprocess, in the
test's own directory, with the launches index under the test's own state
directory, so tests never see each other's launches.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi.testing.plugin import require_engine

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
RECIPES = Path(__file__).resolve().parent / "recipes"

Ninja = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def slurm() -> None:
    """Skip (or fail in CI) unless a Slurm controller with accounting answers here."""
    from shinobi_slurm.backend import SlurmBackend

    status = SlurmBackend({}).check()
    require_engine("slurm", status.usable, status.detail)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """ninja's environment: this test's own launches index and step cache, no user config."""
    values = dict(os.environ)
    values["XDG_STATE_HOME"] = str(tmp_path / "state")
    values["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # no step cache hit from another test
    values["SHINOBI_CONFIG"] = os.devnull
    values.pop("SHINOBI_DEBUG", None)
    return values


def ninja_argv() -> list[str]:
    found = shutil.which("ninja", path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", "shinobi.cli"]


@pytest.fixture
def ninja(tmp_path: Path, env: dict[str, str]) -> Ninja:
    """Run ``ninja ARGS`` in ``tmp_path`` (or ``cwd=``); returns the completed process."""

    def run(
        *args: str, cwd: Path | None = None, timeout: float = 300, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*ninja_argv(), *args],
            cwd=cwd or tmp_path,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run
