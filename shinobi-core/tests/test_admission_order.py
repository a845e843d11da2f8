"""A step declared earlier that becomes ready goes before a later one waiting at the budget.

recipes.txt: "the lowest-declaration-index step goes first"; docs/recipes.md:
"Admission follows declaration order". A step that became ready, and fit,
waited behind a later-declared step queued at the budget until that one had
run: ``A`` (1 CPU, after ``first``) sat behind ``B`` (3 CPUs) while ``hog``
held 2 of the 4.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.config import load_config
from shinobi.resources import Resources
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class Nap(BaseModel):
    secs: float
    mark: str
    after: Path | None = None  # orders the step after the one that made it


class Marked(BaseModel):
    made: Path | None = None


def test_an_earlier_step_that_fits_goes_before_a_later_one_waiting(tmp_path: Path) -> None:
    nap = Cab(
        "nap",
        ["sh", "-c", 'sleep "$0"; date +%s.%N > "$1"'],
        Nap,
        Marked,
        {
            "secs": ParamMeta(positional=True),
            "mark": ParamMeta(positional=True),
            "after": ParamMeta(skip=True),
            "made": ParamMeta(implicit="{mark}"),
        },
    )
    recipe = Recipe("r", max_workers=4)
    recipe.add_step("first", nap, secs=0.5, mark="first.t")
    recipe.add_step(
        "A", nap, secs=0.0, mark="A.t", after=recipe.outputs.first.made, resources=Resources(cpus=1)
    )
    recipe.add_step("hog", nap, secs=2.0, mark="hog.t", resources=Resources(cpus=2))
    recipe.add_step("B", nap, secs=0.0, mark="B.t", resources=Resources(cpus=3))
    config = load_config({"execution.cpus": 4, "cache.enabled": False})
    result = run_recipe(recipe, config=config, cwd=tmp_path)
    assert result.ok, result.error
    ended = {s.name: s.finished for s in result.steps}
    started = {s.name: s.started for s in result.steps}
    assert started["A"] < ended["hog"], "A fit beside hog, yet waited for B's turn"
    assert started["B"] >= ended["hog"]
