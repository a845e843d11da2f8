"""Fixtures for the integration suite: shinobi-core, shinobi-slurm and shinobi-containers together.

Each package's own suite runs with core plus that one package, so what needs two
plugins at once (``ninja compile --engine slurm --container-runtime docker``)
is tested here, in the ``integration`` nox session. Live tests ask for the
engines they use through the ``slurm``, ``docker`` and ``apptainer`` fixtures: outside CI an
engine that is not reachable skips them, in CI (``CI=true``) it fails them.
The checks of the repository's own ground (the testbed scripts' time limits,
what .ci/run pins) belong to no package, so they live here too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shinobi.testing.plugin import require_backend, require_engine

SUMMARY = Path(os.environ.get("TESTBED_CACHE", "/var/cache/shinobi-testbed"), "engines.json")
#: The testbed's docker facts when engines.json is missing (docs/testbed.md).
DEFAULT_DOCKER = {"images": {"busybox": "shinobi-test/busybox:latest"}, "run_flags": ""}

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def apptainer_image() -> str:
    """The testbed's busybox SIF (docs/testbed.md)."""
    with_default = {"images": {"busybox": "/var/cache/shinobi-testbed/images/busybox.sif"}}
    try:
        engines = json.loads(SUMMARY.read_text()).get("engines", {})
    except (OSError, ValueError):
        engines = {}
    return str((engines.get("apptainer") or with_default)["images"]["busybox"])


def docker_facts() -> dict[str, Any]:
    """What the testbed says about its docker: image names and the run flags it needs."""
    try:
        engines = json.loads(SUMMARY.read_text()).get("engines", {})
    except (OSError, ValueError):
        return DEFAULT_DOCKER
    facts: dict[str, Any] = engines.get("docker") or DEFAULT_DOCKER
    return facts


@pytest.fixture(scope="session")
def slurm() -> None:
    """Skip (or fail in CI) unless a Slurm controller with accounting answers here."""
    from shinobi_slurm.backend import SlurmBackend

    status = SlurmBackend({}).check()
    require_engine("slurm", status.usable, status.detail)


@pytest.fixture(scope="session")
def docker() -> None:
    """Skip (or fail in CI) unless the docker daemon answers here."""
    require_backend("docker", {})


@pytest.fixture(scope="session")
def apptainer() -> None:
    """Skip (or fail in CI) unless apptainer runs here."""
    require_backend("apptainer", {})


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """ninja's environment: this test's own state, cache and config (the testbed's docker flags)."""
    config = tmp_path / "shinobi.toml"
    flags = str(docker_facts().get("run_flags", ""))
    config.write_text(f"[backend.docker]\nrun_flags = {json.dumps(flags)}\n")
    values = dict(os.environ)
    values["XDG_STATE_HOME"] = str(tmp_path / "state")
    values["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    values["SHINOBI_CONFIG"] = str(config)
    values.pop("SHINOBI_DEBUG", None)
    return values


def ninja_argv() -> list[str]:
    found = shutil.which("ninja", path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", "shinobi.cli"]


@pytest.fixture
def ninja(tmp_path: Path, env: dict[str, str]) -> Ninja:
    """Run ``ninja ARGS`` in ``tmp_path`` (or ``cwd=``), as a user would; the finished process."""

    def run(
        *args: str, cwd: Path | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*ninja_argv(), *args],
            cwd=cwd or tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run
