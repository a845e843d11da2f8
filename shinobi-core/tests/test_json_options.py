"""A structured recipe input given as text that is not JSON: the example in the
refusal has the input's shape (a list for a list in a list, a mapping for a
mapping, the model's field for a model)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cli_in_process import in_process

_RECIPE = """
from pydantic import BaseModel
from shinobi import Recipe

class M(BaseModel):
    n: int = 1

class RI(BaseModel):
    groups: list[list[str]] = [["a", "b"], ["c"]]
    numbers: list[list[int]] = []
    weights: dict[str, float] = {}
    model: M = M()

class O(BaseModel):
    pass

r = Recipe(name="r", inputs_model=RI, outputs_model=O)
"""


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("--groups", 'give each value as JSON, e.g. \'["a", "b"]\''),
        ("--numbers", "give each value as JSON, e.g. '[1, 2]'"),
        ("--weights", "give it as JSON, e.g. '{\"a\": 1.0}'"),
        ("--model", "give it as JSON, e.g. '{\"n\": 1}'"),
    ],
)
def test_the_json_example_has_the_inputs_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, said: str
) -> None:
    recipe_file = tmp_path / "shapes.py"
    recipe_file.write_text(textwrap.dedent(_RECIPE))
    code, _, err = in_process(capsys, "run", f"{recipe_file}:r", option, "x", "--dry-run")
    assert code == 2
    [line] = err.strip().splitlines()
    assert f"'x' is not JSON (Expecting value: line 1 column 1 (char 0)); {said} (see" in line
