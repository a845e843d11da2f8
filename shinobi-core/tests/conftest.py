"""Shared fixtures for core's tests: running the real ``ninja`` and writing recipes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest


def _ninja() -> list[str]:
    script = Path(sys.executable).with_name("ninja")
    return [str(script)] if script.exists() else [sys.executable, "-m", "shinobi.cli"]


@pytest.fixture
def ninja(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``ninja ARGS`` in ``tmp_path`` (or ``cwd=``) and capture everything."""

    def run(
        *args: str, cwd: Path | None = None, timeout: float = 120, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        environment = {**os.environ, "SHINOBI_CACHE_DIR": str(tmp_path / ".cache"), **(env or {})}
        return subprocess.run(
            [*_ninja(), *args],
            cwd=cwd or tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environment,
        )

    return run


@pytest.fixture
def recipe_file(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a recipe module into tmp_path; returns its path."""

    def write(source: str, name: str = "recipe.py") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return path

    return write


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the developer's own config, cache and launch index out of every test
    (a test's launches went into the user's index, and stayed there as gone)."""
    monkeypatch.setenv("SHINOBI_CONFIG", os.devnull)  # no settings, and no file missing
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / ".state"))


#: Fixtures that start real ``ninja`` processes or build virtualenvs: a test
#: using one is marked ``slow``, so ``pytest -m "not slow"`` is the seconds-long
#: unit suite and the full suite still runs everything.
SLOW_FIXTURES = {"ninja", "made_venv"}
SLOW_MODULES = {"test_interrupt.py", "test_lazy_imports.py"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & SLOW_FIXTURES or item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
