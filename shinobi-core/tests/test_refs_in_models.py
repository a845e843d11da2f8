"""A reference held by a model instance's field is refused where it is wired.

References are followed through lists, tuples and dicts. One inside a model
instance (a field typed ``Any``) was neither an edge nor resolved: the step ran
before its producer, and its function got the ``OutputRef`` object, exit 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi.graph import RecipeGraphError, build_graph
from shinobi.runner import run_recipe
from shinobi.steps import File, Recipe, pystep


class Opts(BaseModel):
    mask: Any = None
    niter: int = 10


class In(BaseModel):
    name: str = "m.txt"


class Out(BaseModel):
    res: str


@pystep
def make(name: str = "m.txt") -> File:
    Path(name).write_text("x")
    return Path(name)


@pystep
def use(opts: Opts) -> str:
    return f"{opts.mask} {opts.niter}"


def _recipe(opts: Any) -> Recipe:
    recipe = Recipe("r", In, Out)
    recipe.add_step("u", use, opts=opts(recipe))
    recipe.add_step("mk", make, name=recipe.inputs.name)
    recipe.set_output("res", recipe.outputs.u.result)
    return recipe


@pytest.mark.parametrize(
    ("opts", "named"),
    [
        (lambda r: Opts(mask=r.outputs.mk.result), "the reference to mk.result"),
        (lambda r: [Opts(mask={"m": r.inputs.name})], "the reference to the recipe input 'name'"),
    ],
)
def test_a_reference_inside_a_model_instance_is_refused(opts: Any, named: str) -> None:
    with pytest.raises(RecipeGraphError) as refused:
        build_graph(_recipe(opts))
    said = str(refused.value)
    assert "step 'u', input 'opts'" in said and f"{named} sits inside an instance of Opts" in said
    assert "give the model as a dict of its fields" in said


def test_the_same_value_as_a_dict_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_recipe(_recipe(lambda r: {"mask": r.outputs.mk.result}), use_cache=False)
    assert result.ok, result.error
    assert result.outputs["res"] == "m.txt 10"
