"""Removing a container: what counts as done, and what is reported (a stand-in CLI)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from shinobi.backends.base import Invocation, RunControl
from shinobi_containers.docker import DockerBackend
from shinobi_containers.podman import PodmanBackend


def stand_in(tmp_path: Path, exit_code: int, message: str) -> str:
    """An executable that records its arguments, prints ``message`` and exits."""
    script = tmp_path / "engine"
    script.write_text(
        f"#!/bin/sh\necho \"$@\" >> '{tmp_path}/calls'\necho '{message}' >&2\nexit {exit_code}\n"
    )
    script.chmod(0o755)
    return str(script)


def calls(tmp_path: Path) -> list[str]:
    return (tmp_path / "calls").read_text().splitlines()


def test_removal_uses_rm_f_and_podman_does_not_wait(tmp_path: Path) -> None:
    assert (
        DockerBackend({"binary": stand_in(tmp_path, 0, "")}).remove("shinobi-a", settle=False)
        is None
    )
    assert (
        PodmanBackend({"binary": stand_in(tmp_path, 0, "")}).remove("shinobi-b", settle=False)
        is None
    )
    assert calls(tmp_path) == ["rm -f shinobi-a", "rm -f -t 0 shinobi-b"]


@pytest.mark.parametrize(
    "message",
    [
        "Error response from daemon: No such container: shinobi-a",
        'Error: no container with name or ID "shinobi-a" found: no such container',
    ],
)
def test_a_container_that_never_existed_is_nothing_to_report(tmp_path: Path, message: str) -> None:
    assert (
        DockerBackend({"binary": stand_in(tmp_path, 1, message)}).remove("shinobi-a", settle=False)
        is None
    )


def test_a_failed_removal_says_what_may_still_run(tmp_path: Path) -> None:
    backend = DockerBackend(
        {"binary": stand_in(tmp_path, 1, "Cannot connect to the Docker daemon")}
    )
    problem = backend.remove("shinobi-a", settle=False)
    assert problem is not None and "\n" not in problem
    assert "shinobi-a may still be running" in problem and "Cannot connect" in problem


def test_an_interrupt_whose_removal_fails_raises_for_core_to_report(tmp_path: Path) -> None:
    backend = DockerBackend({"binary": stand_in(tmp_path, 1, "permission denied")})
    with pytest.raises(Exception, match="permission denied"):
        backend._stop("shinobi-a", RunControl(grace=3))
    assert calls(tmp_path) == ["stop -t 3 shinobi-a", "rm -f shinobi-a"]  # the grace first


def test_a_second_interrupt_cuts_the_grace_short(tmp_path: Path) -> None:
    script = tmp_path / "engine"
    script.write_text(f"#!/bin/sh\necho \"$@\" >> '{tmp_path}/calls'\nsleep 30\n")
    script.chmod(0o755)
    control = RunControl(grace=30)
    control.hurry.set()
    started = time.monotonic()
    DockerBackend({"binary": str(script)}).terminate("shinobi-a", control.grace, control.hurry)
    assert time.monotonic() - started < 5


def test_an_engine_it_cannot_reach_is_said_once_without_a_leftover_warning(
    tmp_path: Path,
) -> None:
    """A user without access to the docker socket: no container was ever made, so
    the failed removal must not warn that one "may still be running"."""
    from shinobi.backends.base import Invocation, RunControl
    from shinobi.failures import describe_failure

    denied = "docker: permission denied while trying to connect to the Docker daemon socket"
    backend = DockerBackend({"binary": stand_in(tmp_path, 126, denied)})
    control = RunControl(grace=1.0)
    run = backend.run(
        Invocation(step="s", argv=("true",), cwd=str(tmp_path), image="busybox"), control
    )
    assert describe_failure(run) == f"docker could not run the step: {denied}"
    assert not [w for w in control.warnings if "may still be running" in w]


@pytest.mark.parametrize(
    ("backend", "message"),
    [
        (DockerBackend, "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."),
        (PodmanBackend, "Error: unable to connect to Podman socket: dial unix /no/sock"),
        (PodmanBackend, "Cannot connect to Podman. Please verify your connection"),
    ],
)
def test_an_engine_never_reached_leaves_no_container_to_warn_about(
    tmp_path: Path, backend: type[DockerBackend | PodmanBackend], message: str
) -> None:
    warned: list[str] = []
    control = RunControl()
    control.on_warning = warned.append
    engine = backend({"binary": stand_in(tmp_path, 125, message)})
    invocation = Invocation(step="s", argv=("true",), cwd=str(tmp_path), image="busybox")
    run = engine.run(invocation, control)
    assert run.returncode != 0
    assert not any("may still be running" in w for w in warned), warned


def test_an_interrupted_container_that_could_not_be_removed_is_said_to_run_on(
    tmp_path: Path,
) -> None:
    """A hung daemon: the run ended 'every step was torn down', exit 143, while it ran on."""
    script = tmp_path / "engine"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  run) exec sleep 30 ;;\n"
        "  *) echo 'docker did not answer' >&2; exit 1 ;;\n"
        "esac\n"
    )
    script.chmod(0o755)
    backend = DockerBackend({"binary": str(script)})
    control = RunControl(grace=0.2)
    control.on_warning = lambda _message: None
    invocation = Invocation(step="s", argv=("true",), cwd=str(tmp_path), image="busybox")
    results = []
    worker = threading.Thread(target=lambda: results.append(backend.run(invocation, control)))
    worker.start()
    time.sleep(0.5)
    control.cancel()
    worker.join(timeout=60)
    (run,) = results
    assert run.cancelled
    assert "rm -f shinobi-" in str(run.details.get("still_running")), run.details
