"""References nested in a wiring value: tuples, dicts and lists of lists.

The graph found a reference one list deep only, and the run resolved lists
only: a tuple made an edge but reached the step as the reference objects, a
dict was passed through unresolved, and a list of lists made no edge at all,
so the run read a producer that had not run (an internal error).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest
from pydantic import BaseModel

import shinobi
from shinobi.graph import RecipeGraphError, build_graph
from shinobi.plan import plan_graph
from shinobi.render.dryrun import dryrun_lines
from shinobi.runner import run_recipe
from shinobi.steps import Recipe


@shinobi.pystep
def plus_one(x: int) -> int:
    return x + 1


@shinobi.pystep
def show(v: Any) -> str:
    return repr(v)


class In(BaseModel):
    a: int = 1


class Out(BaseModel):
    s: str


def _recipe(shape: str) -> Recipe:
    recipe = Recipe("r", In, Out, max_workers=2)
    a, made = recipe.inputs.a, recipe.outputs.one.result
    value: Any = {
        "tuple": (a, made),
        "dict": {"a": a, "made": made},
        "nested": [[a, made]],
        "deep": {"k": [(a, {"m": made})]},
    }[shape]
    recipe.add_step("one", plus_one, x=a)
    recipe.add_step("show", show, v=value)
    recipe.set_output("s", recipe.outputs.show.result)
    return recipe


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ("tuple", "(1, 2)"),
        ("dict", "{'a': 1, 'made': 2}"),
        ("nested", "[[1, 2]]"),
        ("deep", "{'k': [(1, {'m': 2})]}"),
    ],
)
def test_references_inside_any_container_are_edges_and_resolved(
    tmp_path: Path, shape: str, expected: str
) -> None:
    recipe = _recipe(shape)
    graph = build_graph(recipe)
    assert graph.node("show").deps == (graph.index["one"],)
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert result.outputs["s"] == expected


def test_a_nested_reference_to_a_missing_step_is_refused() -> None:
    recipe = Recipe("r", In, Out)
    recipe.add_step("show", show, v={"k": [recipe.outputs.nope.result]})
    with pytest.raises(RecipeGraphError, match="OutputRef names step 'nope'"):
        build_graph(recipe)


def test_a_nested_reference_to_a_missing_input_is_refused() -> None:
    recipe = Recipe("r", In, Out)
    recipe.add_step("show", show, v=({"k": recipe.inputs.b},))
    with pytest.raises(RecipeGraphError, match="InputRef names 'b'"):
        build_graph(recipe)


def test_the_dry_run_plans_a_nested_input_resolved(tmp_path: Path) -> None:
    plan = plan_graph(build_graph(_recipe("tuple")), {"a": 1}, str(tmp_path))
    shown = next(step for step in plan.steps if step.name == "show")
    assert shown.values["v"][0] == 1
    assert repr(shown.values["v"][1]) == "<one.result>"


class Pair(NamedTuple):
    low: int
    high: int


def _pair_recipe() -> Recipe:
    recipe = Recipe("r", In, Out)
    recipe.add_step("show", show, v=Pair(1, recipe.inputs.a))
    recipe.set_output("s", recipe.outputs.show.result)
    return recipe


def test_a_namedtuple_value_keeps_its_type_in_a_run(tmp_path: Path) -> None:
    result = run_recipe(_pair_recipe(), {"a": 5}, cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert result.outputs["s"] == "Pair(low=1, high=5)"


def test_a_namedtuple_value_is_drawn_by_the_dry_run(tmp_path: Path) -> None:
    plan = plan_graph(build_graph(_pair_recipe()), {"a": 5}, str(tmp_path))
    lines = list(dryrun_lines(plan, lambda step: "native", lambda step: None))
    assert any("show(v=Pair(low=1, high=5))" in line for line in lines)
