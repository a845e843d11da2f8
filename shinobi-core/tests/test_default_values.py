"""A cab default is used as the value pydantic makes of it, in the run and the dry run.

pydantic does not validate a default, so ``c: bool = "false"`` reached the tool
as ``--c false`` (a flag turned on), ``a: bool = 0`` as ``--a 0``, ``d: int =
True`` as a bare ``--d`` and a field validator's rewrite never happened; the
dry run showed the same raw words. Now a default the model converts is handed
over as a wired value is, so both show and send what the model makes of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from shinobi.graph import build_graph
from shinobi.plan import plan_graph, validate_inputs
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe, Wrangler

ECHO = ["sh", "-c", 'echo "$@" > got.txt', "sh"]
MADE = ["--b", "--d", "1", "--n", "1.0", "--name", "DFLT", "--al", "--spws", "0.0"]


class Boolish(BaseModel):
    a: bool = 0  # type: ignore[assignment]
    b: bool = 1  # type: ignore[assignment]
    c: bool = "false"  # type: ignore[assignment]
    d: int = True
    n: float = 1
    name: str = "dflt"
    al: bool = Field("yes", alias="AL")  # type: ignore[assignment]
    spws: list[float] = [0]  # type: ignore[list-item]
    off: bool | None = None

    @field_validator("name")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


class Printed(BaseModel):
    v: str | None = None


def _recipe(**wiring: Any) -> Recipe:
    recipe = Recipe("r", BaseModel, BaseModel)
    recipe.add_step("c", Cab("c", ECHO, Boolish, BaseModel), **wiring)
    return recipe


def test_the_run_sends_what_the_model_makes_of_each_default(tmp_path: Path) -> None:
    result = run_recipe(_recipe(), cwd=tmp_path, use_cache=False)
    assert result.status == "ok"
    assert (tmp_path / "got.txt").read_text().split() == MADE


def test_the_dry_run_shows_the_same(tmp_path: Path) -> None:
    plan = plan_graph(build_graph(_recipe()), {}, str(tmp_path))
    assert plan.steps[-1].error is None
    assert plan.steps[-1].argv == [*ECHO, *MADE]


def test_a_dry_run_with_an_input_known_only_at_run_time_shows_the_same(tmp_path: Path) -> None:
    """The model cannot make the inputs before the run: each default is shown made."""
    printer = Cab(
        "p",
        "echo v=7",
        BaseModel,
        Printed,
        wranglers=[Wrangler(r"v=(?P<v>\d+)", action="output", output="v")],
    )
    recipe = Recipe("r", BaseModel, BaseModel)
    recipe.add_step("p", printer)
    recipe.add_step("c", Cab("c", ECHO, Boolish, BaseModel), name=recipe.outputs.p.v)
    plan = plan_graph(build_graph(recipe), {}, str(tmp_path))
    argv = plan.steps[-1].argv
    assert argv is not None
    at = argv.index("--name")
    assert argv[at + 1] == "<p.v>"  # wired: its default is not used
    del argv[at : at + 2]
    assert argv == [*ECHO, *(w for w in MADE if w not in ("--name", "DFLT"))]


def test_given_values_and_none_defaults_stay_as_they_are() -> None:
    node = build_graph(_recipe()).nodes[-1]
    made = validate_inputs(node, {"c": True, "AL": False, "name": "x"}, "step 'c'")
    assert made["c"] is True and made["al"] is False and made["name"] == "X"
    assert made["off"] is None and made["a"] is False and made["d"] == 1
    assert type(made["d"]) is int and type(made["n"]) is float
