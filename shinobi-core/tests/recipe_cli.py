"""``ninja run`` of a recipe written by the test, through click's test runner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shinobi.cli.main import cli

__all__ = ["pipe_runner"]


def pipe_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> Callable[..., Result]:
    """``ninja run r.py:pipe ARGS`` of a module ``text`` (which defines ``pipe``), written
    to ``tmp_path`` and run from there, as a function of ARGS."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text(text)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, ["run", str(tmp_path / "r.py") + ":pipe", *args])

    return invoke
