"""What the live tests need to know about the engines the testbed brought up.

Image names and run flags come from the testbed's engines.json (see
docs/testbed.md), with the documented names as the fallback, so the tests
name the same images on every machine the testbed sets up.
"""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from shinobi.backends.base import Backend, Invocation, PathUse, RunControl
from shinobi.testing.plugin import require_backend

__all__ = [
    "ENGINES",
    "OCI_ENGINES",
    "copied_through",
    "engine_facts",
    "image",
    "live_backend",
    "settings_for",
    "shinobi_containers_of",
    "unprivileged_user",
]

SUMMARY = Path(os.environ.get("TESTBED_CACHE", "/var/cache/shinobi-testbed"), "engines.json")
#: Every backend this package ships; singularity is apptainer's engine under its old name.
ENGINES = ("docker", "podman", "apptainer", "singularity")
OCI_ENGINES = ("docker", "podman")

_DEFAULT_IMAGES = {
    "docker": {"busybox": "shinobi-test/busybox:latest", "python": "shinobi-test/python:bookworm"},
    "podman": {
        "busybox": "localhost/shinobi-test/busybox:latest",
        "python": "localhost/shinobi-test/python:bookworm",
    },
    "apptainer": {
        "busybox": "/var/cache/shinobi-testbed/images/busybox.sif",
        "python": "/var/cache/shinobi-testbed/images/python.sif",
    },
}


@cache
def _summary() -> dict[str, Any]:
    try:
        data = json.loads(SUMMARY.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def engine_facts(backend: str) -> dict[str, Any]:
    engine = "apptainer" if backend == "singularity" else backend
    facts: dict[str, Any] = _summary().get("engines", {}).get(engine, {})
    return facts


def image(backend: str, which: str = "busybox") -> str:
    engine = "apptainer" if backend == "singularity" else backend
    images = engine_facts(backend).get("images") or _DEFAULT_IMAGES[engine]
    return str(images[which])


def settings_for(backend: str, **extra: Any) -> dict[str, Any]:
    """The settings a live test gives ``backend``: the testbed's run flags, plus ``extra``."""
    settings: dict[str, Any] = {}
    flags = engine_facts(backend).get("run_flags")
    if flags and backend in OCI_ENGINES:
        settings["run_flags"] = flags
    settings.update(extra)
    return settings


def live_backend(backend: str, **extra: Any) -> Backend:
    """``backend`` after its own check(): skipped here, failed in CI, when unusable."""
    found = require_backend(backend, settings_for(backend, **extra))
    assert isinstance(found, Backend)
    return found


def shinobi_containers_of(engine: str, run_id: str | None = None) -> list[str]:
    """Every container of ``engine`` named shinobi-*, running or not (of one run's only,
    when ``run_id`` is given: other runs may share this engine)."""
    command = [engine, "ps", "-a", "--filter", "name=shinobi-", "--format", "{{.Names}}"]
    if run_id is not None:
        command += ["--filter", f"label=shinobi.run={run_id}"]
    listed = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    return [f"{engine} container {n}" for n in listed.stdout.split() if n.startswith("shinobi-")]


def unprivileged_user() -> dict[str, Any]:
    user: dict[str, Any] = _summary().get("users", {}).get("unprivileged", {})
    return user or {"name": "shinobi-user", "uid": 1500, "gid": 1500}


def copied_through(backend: Backend, step: str, source: Path, target: Path, cwd: Path) -> None:
    """Copy ``source`` to ``target`` (making its folder) in a container of ``backend``,
    run from ``cwd``, and check the copy: paths reach it through mounts and argv alone."""
    invocation = Invocation(
        step=step,
        argv=(
            "/bin/sh",
            "-c",
            'mkdir -p "${2%/*}" && cp "$1" "$2"',
            "sh",
            str(source),
            str(target),
        ),
        cwd=str(cwd),
        paths=(
            PathUse(str(source), "input", "src", "file", writable=False),
            PathUse(str(target), "output", "dst", "file"),
        ),
        image=image(backend.name),
    )
    result = backend.run(invocation, RunControl(grace=2.0))
    assert result.returncode == 0, result.stderr
    assert target.read_text() == source.read_text()
