"""A ``list_style="comma"`` element that holds a comma would reach the tool as two
elements (``["CS001,CS002", "RS106"]`` as ``CS001,CS002,RS106``): it is refused
before the tool runs, naming the step, the input and the element."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

import shinobi
from shinobi.errors import UsageError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe

SAID = (
    "input 'selection': element 'CS001,CS002' holds a comma, which list_style='comma' joins"
    " the elements with, so the tool would read it as more than one; split it into elements"
    " of its own, or give the field list_style='repeat' or 'spread' if the tool takes those"
)


class Selection(BaseModel):
    selection: list[str]


def _tool(style: str = "comma") -> Cab:
    """Writes its argv into ran.txt, so a test sees whether it ran."""
    return Cab(
        "tool",
        ["sh", "-c", 'echo "$@" > ran.txt', "sh"],
        Selection,
        BaseModel,
        {"selection": ParamMeta(list_style=style)},  # type: ignore[arg-type]
    )


def test_a_literal_element_holding_the_comma_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    recipe = Recipe("r", BaseModel, BaseModel)
    recipe.add_step("t", _tool(), selection=["CS001,CS002", "RS106"])
    with pytest.raises(UsageError) as caught:
        run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == f"recipe 'r', step 't': {SAID}"
    assert not (tmp_path / "ran.txt").exists()


@shinobi.pystep
def stations() -> list[str]:
    return ["CS001,CS002", "RS106"]


def test_an_element_known_only_in_the_run_fails_the_step_before_its_tool(
    tmp_path: Path,
) -> None:
    recipe = Recipe("r", BaseModel, BaseModel)
    recipe.add_step("s", stations)
    recipe.add_step("t", _tool(), selection=recipe.outputs.s.result)
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert not result.ok
    assert (result.failed_step, result.error) == ("t", SAID)
    assert not (tmp_path / "ran.txt").exists()


@pytest.mark.parametrize("style", ["comma", "repeat"])
def test_elements_without_the_comma_or_other_styles_pass(tmp_path: Path, style: str) -> None:
    recipe = Recipe("r", BaseModel, BaseModel)
    selection = ["CS001", "RS106"] if style == "comma" else ["CS001,CS002", "RS106"]
    recipe.add_step("t", _tool(style), selection=selection)
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    assert (tmp_path / "ran.txt").exists()
