"""``ninja status NAME`` of a local run suggests a ``ninja logs`` command that
works when pasted: a recipe name with a space was given unquoted, so the
shell split it and the second word became the STEP argument."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from shinobi.cli.main import cli

RECIPE = """
from shinobi.steps import Cab, Recipe
r = Recipe(name="deep field")
r.add_step("say", Cab(name="say", command=["echo", "hi"]))
"""


def test_the_suggested_logs_command_quotes_the_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text(RECIPE)
    runner = CliRunner()
    assert runner.invoke(cli, ["run", "r.py:r", "--no-cache"]).exit_code == 0
    said = runner.invoke(cli, ["status", "deep field"])
    assert said.exit_code != 0
    shown = said.output + str(said.exception)
    assert f"`ninja logs {shlex.quote('deep field')}`" in shown, shown
