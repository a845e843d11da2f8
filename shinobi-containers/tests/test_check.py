"""check(): whether each engine is usable here, and why not, within seconds."""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import ENGINES, live_backend

from shinobi.backends import get_backend


@pytest.mark.parametrize("name", ENGINES)
def test_a_missing_binary_is_named_with_the_fix(name: str, tmp_path: Path) -> None:
    status = get_backend(name, {"binary": str(tmp_path / "no-such-binary")}).check()
    assert not status.usable
    assert "no-such-binary does not exist" in status.detail  # a path: PATH is not looked at
    assert f"backend.{name}.binary" in status.detail
    status = get_backend(name, {"binary": "no-such-binary"}).check()
    assert not status.usable and "no-such-binary not found on PATH" in status.detail


@pytest.mark.parametrize("name", ENGINES)
def test_a_usable_engine_says_what_it_found(name: str) -> None:
    status = live_backend(name).check()
    assert status.usable and status.detail


def test_an_unreachable_docker_daemon_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live_backend("docker")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    status = get_backend("docker", {}).check()
    assert not status.usable
    assert status.detail.startswith("the docker daemon is not reachable:")
    assert status.detail.endswith("; start it, or point DOCKER_HOST at a running one")
    assert "\n" not in status.detail


def test_a_user_the_daemon_refuses_is_told_to_join_its_group() -> None:
    """`ninja backends` and `ninja doctor` showed docker's words alone; a run said the fix."""
    from shinobi_containers.docker import _fix

    said = "permission denied while trying to connect to the Docker daemon socket"
    assert "`sudo usermod -aG docker $USER`" in _fix(said)


@pytest.mark.parametrize("name", ["docker", "podman", "apptainer", "singularity"])
def test_a_binary_that_is_another_program_is_named_so(name: str) -> None:
    """/bin/false as apptainer was 'does not run: Written by Jim Meyering'."""
    status = get_backend(name, {"binary": "/bin/false"}).check()
    assert not status.usable
    assert status.detail.startswith(f"/bin/false is not {name}: `/bin/false --version` says")
    assert f"point backend.{name}.binary at the {name} program" in status.detail


def test_a_site_wrapper_that_prints_a_banner_first_is_the_engine_still(tmp_path: Path) -> None:
    """An Lmod-style wrapper printing a line before exec'ing apptainer was refused."""
    live_backend("apptainer")
    wrapper = tmp_path / "apptainer"
    wrapper.write_text('#!/bin/sh\necho "Lmod: module apptainer loaded"\nexec apptainer "$@"\n')
    wrapper.chmod(0o755)
    status = get_backend("apptainer", {"binary": str(wrapper)}).check()
    assert status.usable, status.detail
