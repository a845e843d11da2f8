"""A nested recipe's output that its recipe never sets is its outputs model's
default in every run, known before any: the static check refuses an input that
cannot take it, naming the missing ``set_output``; and a step's refused input
names the step once at run time."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel, field_validator

from shinobi.errors import RecipeGraphError, UsageError
from shinobi.graph import build_graph
from shinobi.plan import plan_graph
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe

UNSET = (
    "input 'out' is wired to sub.out, which recipe 'inner' never sets, so it is always None"
    " (add inner.set_output('out', ...))"
)


class TouchIn(BaseModel):
    out: Path


class TouchOut(BaseModel):
    out: Path | None = None


class ManyIn(BaseModel):
    out: list[Path]


class ManyOut(BaseModel):  # a passthrough of a list is a list
    out: list[Path] | None = None


class MaybeIn(BaseModel):
    out: Path | None = None


class Target(BaseModel):
    target: Path = Path("t.txt")


class Targets(BaseModel):
    targets: list[Path] = [Path("t1.txt"), Path("t2.txt")]


class Defaulted(BaseModel):
    out: Path = Path("d.txt")


def _touch(inputs: type[BaseModel] = TouchIn) -> Cab:
    return Cab(
        name="touch",
        command="touch",
        inputs_model=inputs,
        outputs_model=ManyOut if inputs is ManyIn else TouchOut,
        field_meta={"out": ParamMeta(positional=True)},
    )


def _inner(outputs: type[BaseModel] = TouchOut) -> Recipe:
    """Touches its target and sets no output."""
    inner = Recipe("inner", Target, outputs)
    inner.add_step("a", _touch(), out=inner.inputs.target)
    return inner


def test_an_input_wired_to_an_output_never_set_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    outer = Recipe("outer", Target, TouchOut)
    outer.add_step("sub", _inner(), target=outer.inputs.target)
    outer.add_step("b", _touch(), out=outer.outputs.sub.out)
    with pytest.raises(UsageError) as caught:
        run_recipe(outer, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == f"recipe 'outer', step 'b': {UNSET}"
    assert not (tmp_path / "t.txt").exists()  # the sub-recipe never ran


def test_the_dry_run_plan_says_the_same(tmp_path: Path) -> None:
    outer = Recipe("outer", Target, TouchOut)
    outer.add_step("sub", _inner(), target=outer.inputs.target)
    outer.add_step("b", _touch(), out=outer.outputs.sub.out)
    plan = plan_graph(build_graph(outer), {"target": Path("t.txt")}, str(tmp_path))
    assert plan.steps[-1].error == f"step 'b': {UNSET}"


def test_one_nested_deeper_names_the_step_and_output_by_their_paths(tmp_path: Path) -> None:
    middle = Recipe("middle", Target, TouchOut)
    middle.add_step("sub", _inner(), target=middle.inputs.target)
    middle.add_step("b", _touch(), out=middle.outputs.sub.out)
    top = Recipe("top", Target, TouchOut)
    top.add_step("mid", middle, target=top.inputs.target)
    with pytest.raises(UsageError) as caught:
        run_recipe(top, cwd=tmp_path, use_cache=False)
    said = str(caught.value)
    assert said.startswith("recipe 'top', step 'mid.b': input 'out' is wired to mid.sub.out,")
    assert "recipe 'inner' never sets" in said


class Required(BaseModel):
    out: Path


def test_a_recipe_output_wired_to_an_output_never_set_is_refused(tmp_path: Path) -> None:
    outer = Recipe("outer", Target, Required)
    outer.add_step("sub", _inner(), target=outer.inputs.target)
    outer.set_output("out", outer.outputs.sub.out)
    with pytest.raises(UsageError) as caught:
        run_recipe(outer, cwd=tmp_path, use_cache=False)
    cause = UNSET.removeprefix("input 'out' ")
    assert str(caught.value) == f"recipe 'outer', output 'out' {cause}"
    assert not (tmp_path / "t.txt").exists()


def test_a_list_holding_the_output_is_refused_too(tmp_path: Path) -> None:
    outer = Recipe("outer", Target, TouchOut)
    outer.add_step("sub", _inner(), target=outer.inputs.target)
    outer.add_step("b", _touch(ManyIn), out=[outer.outputs.sub.out])
    with pytest.raises(UsageError, match=re.escape(f"{UNSET[:49]}")):
        run_recipe(outer, cwd=tmp_path, use_cache=False)


def test_an_input_that_takes_none_runs(tmp_path: Path) -> None:
    outer = Recipe("outer", Target, TouchOut)
    outer.add_step("sub", _inner(), target=outer.inputs.target)
    outer.add_step("b", _touch(MaybeIn), out=outer.outputs.sub.out)
    plan = plan_graph(build_graph(outer), {"target": Path("t.txt")}, str(tmp_path))
    assert plan.steps[-1].error is None
    assert plan.steps[-1].values["out"] is None  # known, not left to the run


def test_a_usable_default_is_the_known_value(tmp_path: Path) -> None:
    outer = Recipe("outer", Target, Defaulted)
    outer.add_step("sub", _inner(Defaulted), target=outer.inputs.target)
    outer.add_step("b", _touch(), out=outer.outputs.sub.out)
    plan = plan_graph(build_graph(outer), {"target": Path("t.txt")}, str(tmp_path))
    assert plan.steps[-1].error is None
    assert plan.steps[-1].argv == ["touch", "d.txt"]  # the dry run shows what the run does
    result = run_recipe(outer, cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    assert (tmp_path / "d.txt").exists()


def _scattered_outer(consumer: Cab, scatter: list[str] | None = None) -> Recipe:
    outer = Recipe("outer", Targets, TouchOut)
    outer.add_step("sub", _inner(), scatter=["target"], target=outer.inputs.targets)
    outer.add_step("b", consumer, scatter=scatter, out=outer.outputs.sub.out)
    return outer


def test_a_scattered_sub_recipe_gathers_a_list_of_nones(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=re.escape(f"recipe 'outer', step 'b': {UNSET}")):
        run_recipe(_scattered_outer(_touch(ManyIn)), cwd=tmp_path, use_cache=False)
    with pytest.raises(UsageError, match=re.escape(UNSET)):
        run_recipe(_scattered_outer(_touch(), ["out"]), cwd=tmp_path, use_cache=False)
    assert not list(tmp_path.glob("t*.txt"))


def test_a_scatter_over_an_output_declared_one_path_says_it_is_no_list(tmp_path: Path) -> None:
    """Declared ``Path | None``, it is no list whether the sub-recipe sets it or
    not: refused as the graph is built, before the sub-recipe runs."""
    outer = Recipe("outer", Target, TouchOut)
    outer.add_step("sub", _inner(), target=outer.inputs.target)
    outer.add_step("b", _touch(), scatter=["out"], out=outer.outputs.sub.out)
    said = "input 'out': is scattered over the output 'out' of step 'sub', declared Path: one value"
    with pytest.raises(RecipeGraphError, match=re.escape(said)):
        run_recipe(outer, cwd=tmp_path, use_cache=False)
    assert not list(tmp_path.glob("t*.txt"))


def test_a_scattered_sub_recipe_with_no_slices_is_no_refusal(tmp_path: Path) -> None:
    outer = _scattered_outer(_touch(ManyIn))
    plan = plan_graph(build_graph(outer), {"targets": []}, str(tmp_path))
    assert all(step.error is None for step in plan.steps)


class Fresh(BaseModel):
    out: Path

    @field_validator("out")
    @classmethod
    def _not_there(cls, value: Path) -> Path:
        if value.exists():
            raise ValueError("exists already")
        return value


def test_a_refusal_at_run_time_names_the_step_once(tmp_path: Path) -> None:
    recipe = Recipe("r", Target, TouchOut)
    recipe.add_step("a", _touch(), out=recipe.inputs.target)
    recipe.add_step("b", _touch(Fresh), out=recipe.outputs.a.out)
    result = run_recipe(recipe, {"target": tmp_path / "t"}, cwd=tmp_path, use_cache=False)
    assert result.failed_step == "b"
    assert (result.error or "").startswith("input 'out': Value error, exists already (got ")


def test_a_nested_refusal_at_run_time_names_the_step_once(tmp_path: Path) -> None:
    inner = Recipe("inner", Target, TouchOut)
    inner.add_step("a", _touch(), out=inner.inputs.target)
    inner.add_step("b", _touch(Fresh), out=inner.outputs.a.out)
    outer = Recipe("outer", Target, TouchOut)
    outer.add_step("sub", inner, target=outer.inputs.target)
    result = run_recipe(outer, {"target": tmp_path / "t"}, cwd=tmp_path, use_cache=False)
    assert result.failed_step == "sub"
    assert (result.error or "").startswith(
        "step 'sub.b' failed: input 'out': Value error, exists already (got "
    )


class Made(BaseModel):
    restored: File | None = None  # nothing fills it: no implicit=, harvest= or wrangler


class TakesPath(BaseModel):
    src: File


class MaskIn(BaseModel):
    restored_image: File | None = None


class MaskOut(BaseModel):
    mask: File


@pytest.mark.parametrize("downstream", ["required", "template"])
def test_an_output_nothing_fills_is_none_before_the_run_too(
    tmp_path: Path, downstream: str
) -> None:
    """The dry run refused it; the run ran the imaging step first (hours, on real data)
    and then failed the next one, and the template's "is not set (give it a value)"
    sent the user to a wiring that was right."""
    image = Cab("image", ["touch", "image-ran"], None, Made)
    recipe = Recipe("r")
    recipe.add_step("image", image)
    if downstream == "required":
        recipe.add_step("count", Cab("count", "true", TakesPath), src=recipe.outputs.image.restored)
    else:
        mask = Cab(
            "mask", "true", MaskIn, MaskOut, {"mask": ParamMeta(implicit="{restored_image}.mask")}
        )
        recipe.add_step("mask", mask, restored_image=recipe.outputs.image.restored)
    with pytest.raises(UsageError) as info:
        run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert "is wired to image.restored, an output nothing fills" in str(info.value)
    assert "so it is always None: declare how the tool makes it" in str(info.value)
    assert not (tmp_path / "image-ran").exists()


def test_an_optional_recipe_output_never_set_is_warned_of(tmp_path: Path) -> None:
    """A forgotten ``set_output`` of an optional output ended the run "ok" with the
    output None, without a word."""
    outer = Recipe("outer", Target, TouchOut)
    outer.add_step("b", _touch(), out=Path("made.txt"))
    result = run_recipe(outer, cwd=tmp_path, use_cache=False)
    assert result.ok and result.outputs == {"out": None}
    assert (
        "recipe 'outer': its output 'out' is never set (no set_output('out', ...)), so it is"
        " always None"
    ) in result.warnings
    outer.set_output("out", outer.outputs.b.out)
    assert not [
        w for w in run_recipe(outer, cwd=tmp_path, use_cache=False).warnings if "never set" in w
    ]
