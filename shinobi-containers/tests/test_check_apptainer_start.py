"""check() for apptainer: an engine that answers --version but cannot start a
container is not usable, live.

The testbed's own notes name one such host: a configuration asking for every
capability (``root default capabilities = full``) where the host withholds
one. ``apptainer --version`` answers there, so ``ninja backends`` said "ok"
while every step failed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from live_engines import engine_facts, live_backend

from shinobi.backends import get_backend

CONFIG = Path("/etc/apptainer/apptainer.conf")


def broken_engine(tmp_path: Path, real: str) -> Path:
    """``real`` behind a wrapper that gives it a configuration this host refuses."""
    text = re.sub(
        r"(?m)^root default capabilities = .*$",
        "root default capabilities = full",
        CONFIG.read_text(),
    )
    config = tmp_path / "apptainer.conf"
    config.write_text(text)
    wrapper = tmp_path / "apptainer"
    wrapper.write_text(f'#!/bin/sh\nexec {real} -c {config} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def test_an_apptainer_that_cannot_start_a_container_is_not_usable(tmp_path: Path) -> None:
    live_backend("apptainer")
    if os.geteuid() != 0 or not CONFIG.exists():
        pytest.skip("needs root (apptainer -c) and the system's apptainer.conf")
    real = str(engine_facts("apptainer").get("binary") or "apptainer")
    wrapper = broken_engine(tmp_path, real)
    status = get_backend("apptainer", {"binary": str(wrapper)}).check()
    assert not status.usable
    assert "cannot start a container here" in status.detail
    assert "capability" in status.detail and "\x1b" not in status.detail
