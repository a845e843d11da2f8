"""What the live tests need to know about the engines the testbed brought up.

Image names and run flags come from the testbed's engines.json (see
docs/testbed.md), with the documented names as the fallback, so the tests
name the same images on every machine the testbed sets up.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import site
import subprocess
import sysconfig
import tempfile
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
    "reachable_sites",
    "settings_for",
    "shared_sites",
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


def reachable_sites(into: Path, sites: list[str] | None = None) -> list[str]:
    """This environment's site directories (or ``sites``), copied under ``into`` so that
    any user can import from them; the copies' paths, for ``site.addsitedir``.

    A test run as the unprivileged user imports shinobi from here, but a clone (and
    its .nox venvs) under /root, mode 700, is out of that user's reach. A ``.pth``
    line naming a directory (an editable install's source) is copied too and
    pointed at its copy.
    """
    if sites is None:
        sites = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    into.chmod(0o755)
    copies = []
    for number, found in enumerate(dict.fromkeys(s for s in sites if os.path.isdir(s))):
        copy = into / f"site-{number}"
        shutil.copytree(found, copy, ignore=shutil.ignore_patterns("__pycache__"))
        for pth in copy.glob("*.pth"):
            pth.write_text("".join(_reachable_line(line, into) for line in pth.open()))
        copies.append(str(copy))
    for path in [into, *into.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))
    return copies


@cache
def shared_sites() -> tuple[str, ...]:
    """:func:`reachable_sites` of this environment, copied once per test process."""
    into = Path(tempfile.mkdtemp(prefix="shinobi-sites-", dir="/tmp"))
    atexit.register(shutil.rmtree, into, True)
    return tuple(reachable_sites(into))


def _reachable_line(line: str, into: Path) -> str:
    """A .pth line, a directory in it replaced by a copy under ``into``."""
    named = line.strip()
    if not named or named.startswith(("#", "import")) or not os.path.isdir(named):
        return line
    copy = into / f"src-{len(list(into.glob('src-*')))}"
    shutil.copytree(named, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return f"{copy}\n"


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
