"""``backend=``/``venv=`` given to the add_step of a nested recipe is refused when the
graph is built: its steps never took it, so a sub-pipeline asked to run in a
container ran on the host (or the other way round), without a word."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from shinobi.graph import RecipeGraphError, build_graph
from shinobi.steps import Cab, Recipe, StepRef

echo = Cab("e", "true", BaseModel, BaseModel)


def _inner() -> Recipe:
    inner = Recipe("inner", BaseModel, BaseModel)
    inner.add_step("i", echo)
    return inner


@pytest.mark.parametrize(
    ("setting", "value", "instead"),
    [
        ("backend", "podman", "choose the backend for the whole run with --backend"),
        ("backend", "native", "choose the backend for the whole run with --backend"),
        ("venv", "/opt/venv", "set backend.venv for the whole run"),
    ],
)
def test_a_nested_recipe_refuses_a_backend_or_venv(setting: str, value: str, instead: str) -> None:
    outer = Recipe("r", BaseModel, BaseModel)
    outer.add_step("a", echo, backend="native")
    outer.add_step("n", _inner(), **{setting: value})
    with pytest.raises(RecipeGraphError) as caught:
        build_graph(outer)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"recipe 'r', step 'n': {setting}= is given to a nested recipe")
    assert f"set {setting}= on the steps inside the nested recipe" in message
    assert instead in message


def test_a_steprefs_backend_on_a_deeper_nested_recipe_is_refused_too() -> None:
    middle = Recipe("middle", BaseModel, BaseModel)
    middle.steps.append(StepRef("deep", _inner(), backend="docker"))
    outer = Recipe("r", BaseModel, BaseModel)
    outer.add_step("m", middle)
    with pytest.raises(RecipeGraphError, match=r"recipe 'r\.m', step 'deep': backend= is given"):
        build_graph(outer)


def test_a_backend_on_the_steps_inside_a_nested_recipe_is_kept() -> None:
    inner = Recipe("inner", BaseModel, BaseModel)
    inner.add_step("i", echo, backend="podman", venv="/opt/venv")
    outer = Recipe("r", BaseModel, BaseModel)
    outer.add_step("n", inner)
    graph = build_graph(outer)
    node = graph.node("n").subgraph.node("i")  # type: ignore[union-attr]
    assert (node.backend, node.venv) == ("podman", "/opt/venv")
