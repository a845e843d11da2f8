"""An output named like a plain ``str`` input, with a rule of its own (docs/cabs.md).

A cab whose ``image: File`` output has an implicit template and whose
``image`` input is text (no dtype) was refused as "the path input 'image' (a
passthrough)", and before that the run silently took the text as the output's
path, ignoring the template. The template (or glob, or wrangler) now gives
the output; with none of them, the text still names its path.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.graph import build_graph
from shinobi.plan import plan_graph
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe, Wrangler
from shinobi.steps.argv import path_uses


class Named(BaseModel):
    image: str = "x"


class Made(BaseModel):
    image: File | None = None


class Required(BaseModel):
    image: File


class PathIn(BaseModel):
    image: File


def _maker(**meta: str) -> Cab:
    field_meta = {"image": ParamMeta(positional=True, **meta)}  # type: ignore[arg-type]
    return Cab("mk", ["sh", "-c", 'touch "$0.fits"'], Named, Made, field_meta)


def _recipe() -> Recipe:
    recipe = Recipe("imgname", _recipe_inputs(), Required)
    recipe.add_step("mk", _maker(implicit="{image}.fits"), image=recipe.inputs.name)
    recipe.set_output("image", recipe.outputs.mk.image)
    return recipe


def _recipe_inputs() -> type[BaseModel]:
    class RecipeIn(BaseModel):
        name: str = "deep"

    return RecipeIn


def test_the_template_gives_the_output_in_the_run(tmp_path: Path) -> None:
    result = run_recipe(_recipe(), cwd=tmp_path, use_cache=False)
    assert result.status == "ok"
    assert str(result.outputs["image"]) == "deep.fits"
    assert (tmp_path / "deep.fits").is_file()


def test_the_dry_run_names_the_same_file_as_an_output(tmp_path: Path) -> None:
    plan = plan_graph(build_graph(_recipe()), {"name": "deep"}, str(tmp_path))
    step = plan.steps[0]
    assert step.error is None
    assert step.outputs == {"image": "deep.fits"}
    assert [(u.path, u.role, u.field) for u in step.paths] == [
        (str(tmp_path / "deep.fits"), "output", "image")
    ]
    assert plan.outputs["image"] == "deep.fits"


@pytest.mark.parametrize(
    ("meta", "rule"),
    [({"implicit": "{image}.fits"}, "implicit"), ({"harvest": "{image}*.fits"}, "after")],
)
def test_a_template_or_a_glob_is_the_one_source(meta: dict[str, str], rule: str) -> None:
    assert _maker(**meta).output_rules() == {"image": rule}


def test_a_wrangler_is_the_one_source() -> None:
    wrangler = Wrangler(r"wrote (?P<image>\S+)", action="output", output="image")
    cab = Cab("mk", "mk", Named, Made, wranglers=[wrangler])
    assert cab.output_rules() == {"image": "after"}


def test_with_no_rule_of_its_own_the_output_is_the_path_the_text_names() -> None:
    """As it always was (a ``log: str`` handed to a tool that writes there): only
    a template, a glob or a wrangler of the output's own takes precedence."""
    assert Cab("mk", "mk", Named, Required).output_rules() == {"image": "passthrough"}
    recipe = Recipe("r", BaseModel, BaseModel)
    recipe.add_step("mk", Cab("mk", "mk", Named, Required))
    build_graph(recipe)


def test_a_path_input_and_a_template_are_still_two_sources() -> None:
    meta = {"image": ParamMeta(positional=True, implicit="{image}.fits")}
    with pytest.raises(
        ValueError, match="given both by the path input 'image' \\(a passthrough\\)"
    ):
        Cab("mk", "mk", PathIn, Made, meta)


def test_a_path_input_stays_a_passthrough(tmp_path: Path) -> None:
    cab = Cab("mk", "touch", PathIn, Made, {"image": ParamMeta(positional=True)})
    assert cab.output_rules() == {"image": "passthrough"}
    uses = path_uses(cab, {"image": "a.fits"}, {"image": "a.fits"}, str(tmp_path))
    assert [(u.role, u.field) for u in uses] == [("output", "image")]
