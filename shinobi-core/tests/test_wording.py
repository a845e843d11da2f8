"""Counts printed to people take their noun in the right number."""

from __future__ import annotations

from pydantic import BaseModel

from shinobi.graph import build_graph
from shinobi.render.formats import render_graph
from shinobi.steps import Cab, Recipe
from shinobi.wording import counted


def test_counted_takes_the_singular_for_one_only() -> None:
    assert counted(1, "step") == "1 step"
    assert counted(0, "step") == "0 steps"
    assert counted(2, "entry", "entries") == "2 entries"
    assert counted(1, "entry", "entries") == "1 entry"


class _Nothing(BaseModel):
    pass


def test_a_one_step_graph_says_one_step() -> None:
    """`ninja graph` of a one-step recipe printed 'recipe r: 1 steps'."""
    recipe = Recipe("r")
    recipe.add_step("only", Cab("only", ["/bin/true"], _Nothing, _Nothing))
    first = render_graph(build_graph(recipe), "text").splitlines()[0]
    assert first == "recipe r: 1 step"
