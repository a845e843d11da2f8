"""A recipe's name follows the step names' rule, checked where the Recipe is made:
one with a line break forged rows of ``ninja runs`` and broke ``ninja graph``."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from shinobi.errors import RecipeGraphError
from shinobi.graph import build_graph
from shinobi.runner import as_recipe
from shinobi.steps import Cab, Recipe


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("cal\n20991231-000000-ffffff  fake  ok", "holds the control character '\\n'"),
        ("r\x1b[31mRED", "holds the control character '\\x1b'"),
        ("r\x9b31mRED", "holds the control character '\\x9b'"),
        ("cal\u202ev2", "holds the invisible character '\\u202e'"),
        ("", "is empty"),
        ("..", "is only dots"),
        ("cal/v2", 'holds "/"'),
        (None, "is NoneType None, not a string"),
    ],
)
def test_a_bad_recipe_name_is_refused_where_the_recipe_is_made(name: object, problem: str) -> None:
    with pytest.raises(ValueError) as caught:
        Recipe(name, BaseModel, BaseModel)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "\n" not in message
    assert isinstance(caught.value, RecipeGraphError)  # one line at the terminal, exit 2
    assert f"the name {problem}; give the recipe a name such as 'calibrate'" in message


def test_a_cab_run_alone_with_a_bad_name_is_refused_as_a_graph_error() -> None:
    cab = Cab("a\nb", "true", BaseModel, BaseModel)
    with pytest.raises(RecipeGraphError, match="control character"):
        as_recipe(cab)


@pytest.mark.parametrize("name", ["calibrate", "self-cal.v2", "漢字", "r 1", ".hidden"])
def test_a_usual_recipe_name_is_kept(name: str) -> None:
    recipe = Recipe(name, BaseModel, BaseModel)
    recipe.add_step("a", Cab("e", "true", BaseModel, BaseModel))
    assert build_graph(recipe).recipe.name == name
