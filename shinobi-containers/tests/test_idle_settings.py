"""An apptainer setting given to docker or podman.

``[backend.docker] memory_stall_timeout = 3`` was taken without a word,
though the memory-stall watch is apptainer's and singularity's only: the
user believed steps stuck at their memory limit were watched. Like
``network`` on apptainer, it now gets a warning that it does nothing there,
from a run and from ``ninja backends``/``doctor``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import OCI_ENGINES, live_backend
from stand_in import QUIET_ENGINE

from shinobi.backends.base import Invocation
from shinobi_containers.apptainer import ApptainerBackend
from shinobi_containers.docker import DockerBackend
from shinobi_containers.podman import PodmanBackend

SAID = "memory_stall_timeout = 3 does nothing here"


def invocation(tmp_path: Path) -> Invocation:
    return Invocation(step="s", argv=("true",), cwd=str(tmp_path), image="busybox")


@pytest.mark.parametrize("backend", [DockerBackend, PodmanBackend])
def test_a_run_warns_that_the_stall_watch_does_nothing_on_docker_or_podman(
    tmp_path: Path, backend: type[DockerBackend]
) -> None:
    engine = backend({"memory_stall_timeout": 3, "binary": QUIET_ENGINE})
    warnings = engine.prepare([invocation(tmp_path)])
    assert any(f"backend.{backend.name}.{SAID}" in w for w in warnings), warnings
    quiet = backend({"binary": QUIET_ENGINE}).prepare([invocation(tmp_path)])
    assert not any("memory_stall_timeout" in w for w in quiet), quiet


def test_apptainer_keeps_its_stall_watch_quietly(tmp_path: Path) -> None:
    engine = ApptainerBackend({"memory_stall_timeout": 3, "binary": QUIET_ENGINE})
    inv = Invocation(step="s", argv=("true",), cwd=str(tmp_path), image="docker://busybox")
    assert not any("memory_stall_timeout" in w for w in engine.prepare([inv]))


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_backends_and_doctor_say_it_too(engine: str) -> None:
    status = live_backend(engine, memory_stall_timeout=3).check()
    assert status.usable and SAID in status.detail, status.detail


@pytest.mark.parametrize("settings", [{"run_as_host_user": False}, {"run_as_host_user": "no"}])
def test_apptainer_says_it_runs_steps_as_the_user_whatever_the_setting(
    tmp_path: Path, settings: dict[str, object]
) -> None:
    """``run_as_host_user = false`` (meant: root in the container) was taken without
    a word by apptainer, whose steps run as the invoking user."""
    engine = ApptainerBackend({**settings, "binary": QUIET_ENGINE})
    inv = Invocation(step="s", argv=("true",), cwd=str(tmp_path), image="docker://busybox")
    said = [w for w in engine.prepare([inv]) if "run_as_host_user = false" in w]
    assert len(said) == 1 and "always run as the invoking user" in said[0], said
    for quiet in ({"run_as_host_user": True}, {}):  # true is the global default: no word
        warnings = ApptainerBackend({**quiet, "binary": QUIET_ENGINE}).prepare([inv])
        assert not any("run_as_host_user" in w for w in warnings), warnings
