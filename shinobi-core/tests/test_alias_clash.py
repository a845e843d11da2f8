"""An alias equal to another input's name is refused as ambiguous.

ninja reads inputs by name and by alias, so with ``start`` aliased ``begin``
beside a field ``begin``, ``--help`` showed ``--start, --begin`` and
``--input-begin`` as two options, and either one set both inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process as _ninja

RECIPE = """
from pydantic import AliasChoices, BaseModel, Field
from shinobi.steps import Cab, InputRef, ParamMeta, Recipe, StepRef

class Win(BaseModel):
    start: int = Field(0, alias="begin")
    begin: int = 100

class Shared(BaseModel):
    start: int = Field(0, alias="s")
    stop: int = Field(1, validation_alias=AliasChoices("stop", "s"))

class Plain(BaseModel):
    start: int = Field(0, alias="s", validation_alias="s")
    stop: int = 1

class EchoIn(BaseModel):
    words: list[int] = []

class O(BaseModel):
    pass

echo = Cab("echo", ["echo"], EchoIn, O, {"words": ParamMeta(positional=True)})

def pipe(name, model, first, second):
    wiring = {"words": [InputRef(field=first), InputRef(field=second)]}
    return Recipe(name=name, inputs_model=model, outputs_model=O,
                  steps=[StepRef(name="say", step=echo, wiring=wiring)])

r = pipe("r", Win, "start", "begin")
shared = pipe("shared", Shared, "start", "stop")
plain = pipe("plain", Plain, "start", "stop")
"""


@pytest.fixture
def recipes(tmp_path: Path) -> Path:
    path = tmp_path / "al.py"
    path.write_text(RECIPE)
    return path


@pytest.mark.parametrize("args", [("--help",), ("--start", "5", "--dryrun")])
def test_an_alias_that_is_another_inputs_name_is_refused(
    recipes: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, out, err = _ninja(capsys, "run", f"{recipes}:r", *args)
    assert code == 2, out + err
    assert err.strip().splitlines() == [
        "ninja: error: recipe 'r': input 'start' has the alias 'begin', which is also the name"
        " of input 'begin', so that key would set both; rename the alias or the field"
    ], err


def test_an_alias_two_inputs_share_is_refused(
    recipes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _ninja(capsys, "run", f"{recipes}:shared", "--dryrun")
    assert code == 2, out + err
    assert "input 'stop' has the alias 's', which is also an alias of input 'start'" in err, err


def test_an_alias_of_its_own_is_fine(recipes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _ninja(capsys, "run", f"{recipes}:plain", "--s", "5", "--dryrun")
    assert code == 0, err
    assert "echo 5 1" in out, out
