"""The recipe's outputs printed after ``ninja run``: values a person can give back.

A model output printed as Python's ``str()`` (``solint=3 mode='p'``) and a
mapping as its repr; a text output echoed from the tool kept its escape
codes, which acted on the terminal. They are now shown as ``--json`` holds
them, and ninja's line carries no escape code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from shinobi.cli.main import cli

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe, Wrangler

class Sol(BaseModel):
    solint: int = 3
    mode: str = "p"

class In(BaseModel):
    pass

class Out(BaseModel):
    said: str | None = None

class RecipeOut(BaseModel):
    sol: Sol = Sol()
    table: dict[str, int] = {"b": 2, "a": 1}
    said: str | None = None

tool = Cab(
    name="tool",
    command=["printf", "\\\\033[31mred\\\\033[0m\\\\n"],
    inputs_model=In,
    outputs_model=Out,
    wranglers=[Wrangler(pattern=r"(?P<said>.*red.*)", action="output", output="said")],
)
pipe = Recipe(name="pipe", inputs_model=In, outputs_model=RecipeOut)
pipe.add_step("tool", tool)
pipe.set_output("said", pipe.outputs.tool.said)
"""


def test_outputs_are_shown_as_data_without_escape_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text(RECIPE)
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "r.py") + ":pipe", "--no-cache"])
    assert result.exit_code == 0, result.output
    lines = {
        line.split(" = ", 1)[0]: line.split(" = ", 1)[1]
        for line in result.stdout.splitlines()
        if " = " in line
    }
    assert json.loads(lines["sol"]) == {"solint": 3, "mode": "p"}, lines
    assert json.loads(lines["table"]) == {"b": 2, "a": 1}, lines
    assert "\x1b" not in lines["said"] and "red" in lines["said"], lines
