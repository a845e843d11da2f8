"""Wiring mistakes whose errors showed an object's repr or a bare None, not the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.errors import RecipeGraphError, UsageError
from shinobi.graph import build_graph
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class TouchIn(BaseModel):
    out: File


class TouchOut(BaseModel):
    out: File


touch = Cab("touch", "/bin/touch", TouchIn, TouchOut, {"out": ParamMeta(positional=True)})


class CatIn(BaseModel):
    f: File


cat = Cab("cat", "/bin/cat", CatIn, None, {"f": ParamMeta(positional=True)})


class Named(BaseModel):
    target: str = "t.txt"


@pytest.mark.parametrize(
    ("step", "said"),
    [
        (
            "t",
            "it names step 't' but none of its outputs: write .outputs.t.FIELD (the output's name)",
        ),
        # a step that does not exist is said so even without its output
        ("tt", "it names step 'tt', which does not exist; did you mean 't'?"),
    ],
)
def test_a_step_named_without_its_output_says_how_to_name_one(step: str, said: str) -> None:
    recipe = Recipe("r", Named)
    recipe.add_step("t", touch, out=recipe.inputs.target)
    recipe.add_step("c", cat, f=getattr(recipe.outputs, step))
    with pytest.raises(RecipeGraphError) as caught:
        build_graph(recipe)
    assert str(caught.value) == f"recipe 'r', step 'c', input 'f': {said}"


@pytest.mark.parametrize(
    ("wired", "said"),
    [
        (lambda r: r.inputs, "it is .inputs itself: write .inputs.FIELD"),
        (lambda r: [r.outputs], "it is .outputs itself: write .outputs.STEP.FIELD"),
    ],
)
def test_a_proxy_itself_wired_says_what_to_write(wired, said) -> None:  # type: ignore[no-untyped-def]
    recipe = Recipe("r", Named)
    recipe.add_step("t", touch, out=wired(recipe))
    with pytest.raises(RecipeGraphError, match="step 't', input 'out': " + said):
        build_graph(recipe)


class Optional(BaseModel):
    n: int | None = None


class CountIn(BaseModel):
    n: int = 3


count = Cab("count", "/bin/echo", CountIn, None)


def test_an_unset_optional_recipe_input_names_itself_and_the_fix(tmp_path: Path) -> None:
    recipe = Recipe("r", Optional)
    recipe.add_step("c", count, n=recipe.inputs.n)
    with pytest.raises(UsageError) as caught:
        run_recipe(recipe, cwd=tmp_path)
    assert str(caught.value).endswith(
        "input 'n': Input should be a valid integer (got None); it is the recipe's input 'n',"
        " which is None (not given?): give it a value (--n on the command line), or let this"
        " input take None"
    )


class KeywordIn(BaseModel):
    n_: int = 3


def test_the_fix_names_the_option_ninja_run_really_has(tmp_path: Path) -> None:
    # a field `n_` is `--n` on the command line (a trailing _ spells a keyword), not `--n-`
    recipe = Recipe("r", Named2)
    recipe.add_step("c", Cab("count", "/bin/echo", KeywordIn, None), n_=recipe.inputs.n_)
    with pytest.raises(UsageError) as caught:
        run_recipe(recipe, cwd=tmp_path)
    assert "give it a value (--n on the command line)" in str(caught.value)


class Named2(BaseModel):
    n_: int | None = None


class UnsetIn(BaseModel):
    ms: File = "obs.ms"  # type: ignore[assignment]  # a path default written as text
    niter: int = None  # type: ignore[assignment]  # None: "not given", no flag


class UnsetOut(BaseModel):
    img: File | None = None


unset = Cab("img", "/bin/echo", UnsetIn, UnsetOut, {"img": ParamMeta(implicit="{ms.stem}.fits")})


def test_a_none_wired_to_an_input_whose_default_is_none_is_not_given(tmp_path: Path) -> None:
    # `niter: int = None` takes None as "not given"; a recipe input left unset that is
    # wired to it is the same None, and was refused as no integer
    recipe = Recipe("r", Optional)
    recipe.add_step("img", unset, niter=recipe.inputs.n)
    result = run_recipe(recipe, cwd=tmp_path)
    assert result.ok, result.error
    assert result.steps[0].argv == ["/bin/echo", "--ms", "obs.ms"]


def test_a_cab_run_alone_takes_its_none_defaults_as_not_given(tmp_path: Path) -> None:
    # a cab run by itself is wrapped in a recipe whose inputs are its own: every
    # input is wired, a None default too (it failed as no integer, reported as a
    # template that could not be filled from the text default)
    result = run_recipe(unset, cwd=tmp_path)
    assert result.ok, result.error
    assert result.steps[0].argv == ["/bin/echo", "--ms", "obs.ms"]
    assert result.outputs == {"img": Path("obs.fits")}
    given = run_recipe(unset, {"niter": 5}, cwd=tmp_path)
    assert given.steps[0].argv == ["/bin/echo", "--ms", "obs.ms", "--niter", "5"]


def test_resources_on_the_top_level_recipe_are_refused_not_ignored() -> None:
    """Refused on a nested recipe, they were silently ignored on the one run."""
    from shinobi.resources import Resources

    recipe = Recipe("r", Named, resources=Resources(cpus=1))
    recipe.add_step("t", touch, out=recipe.inputs.target)
    with pytest.raises(RecipeGraphError, match="resources are declared on the recipe"):
        build_graph(recipe)


def test_an_output_set_twice_is_refused() -> None:
    """The second call silently replaced the first, while a step name used twice is refused."""
    recipe = Recipe("r", Named)
    recipe.set_output("f", recipe.inputs.target)
    with pytest.raises(ValueError, match="output 'f' is already set"):
        recipe.set_output("f", recipe.inputs.target)


def test_an_input_named_like_an_add_step_keyword_is_not_taken_for_it() -> None:
    """A cab input `backend` given to add_step became the step's backend
    ("unknown backend 'casa'"), or silently chose one."""
    from shinobi.steps import StepRef

    class Tool(BaseModel):
        backend: str

    tool = Cab("tool", ["/bin/echo"], Tool, None)
    recipe = Recipe("r")
    with pytest.raises(ValueError, match="backend= is add_step's own, but the step has an input"):
        recipe.add_step("e", tool, backend="casa")
    recipe.steps.append(StepRef("e", tool, {"backend": "casa"}))  # the way it names
    assert build_graph(recipe).nodes[0].backend is None
