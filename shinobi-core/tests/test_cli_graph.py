"""Graph validation: the less common ways a recipe can be wrong."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from shinobi.errors import RecipeGraphError
from shinobi.graph import build_graph
from shinobi.steps import Cab, ParamMeta, Recipe


class Say(BaseModel):
    w: str


ECHO = Cab("echo", "/bin/echo", Say, None, {"w": ParamMeta(positional=True)})


def test_a_step_named_like_a_slice_of_a_scattered_sibling_is_refused() -> None:
    """Step 'x[0]' and slice 0 of the scattered step 'x' wrote one log file, x[0].out."""
    recipe = Recipe("r")
    recipe.add_step("x[0]", ECHO, w="step")
    recipe.add_step("x", ECHO, scatter=["w"], w=["slice"])
    with pytest.raises(RecipeGraphError) as caught:
        build_graph(recipe)
    assert str(caught.value) == (
        "recipe 'r', step 'x[0]': the name is how slice 0 of the scattered step 'x' is"
        " named; give the step another name"
    )


def test_brackets_in_a_name_are_fine_when_no_sibling_scatters() -> None:
    recipe = Recipe("r")
    recipe.add_step("x[0]", ECHO, w="step")
    recipe.add_step("x", ECHO, w="other")
    recipe.add_step("y[1]", ECHO, w="third")
    assert [n.name for n in build_graph(recipe).nodes] == ["x[0]", "x", "y[1]"]
