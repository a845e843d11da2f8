"""A recipe's required path output must exist when the run ends.

A step's optional output names where its product goes, made or not
(docs/cabs.md); a recipe whose required ``File`` output ``set_output`` wired
to one reported success naming a file no step made, and exited 0. The run
now fails, naming the output and the path; an optional recipe output keeps
the name, made or not.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe, Wrangler


class ImageIn(BaseModel):
    prefix: str = "deep"


class ImageOut(BaseModel):
    restored: File | None = None  # the tool writes it only on success


class Promised(BaseModel):
    image: File


class Maybe(BaseModel):
    image: File | None = None


UNMADE = (
    "recipe 'r': its output 'image' names 'deep-image.fits', which does not exist (set_output"
    " wires it to an output its step may leave unmade: have the step make it, or declare the"
    " recipe's output optional, `... | None = None`)"
)


def _imager(script: str) -> Cab:
    return Cab(
        "imager",
        ["sh", "-c", script],
        ImageIn,
        ImageOut,
        {"prefix": ParamMeta(skip=True), "restored": ParamMeta(implicit="{prefix}-image.fits")},
    )


def _recipe(script: str, outputs: type[BaseModel] = Promised, name: str = "r") -> Recipe:
    recipe = Recipe(name, ImageIn, outputs)
    recipe.add_step("image", _imager(script), prefix=recipe.inputs.prefix)
    recipe.set_output("image", recipe.outputs.image.restored)
    return recipe


def test_a_required_output_no_step_made_fails_the_run(tmp_path: Path) -> None:
    result = run_recipe(_recipe("echo 'diverged'"), cwd=tmp_path, use_cache=False)
    assert result.status == "failed"
    assert result.error == UNMADE
    assert result.outputs == {}
    assert [s.status for s in result.steps] == ["ok"]  # the step kept its documented name


def test_one_the_step_made_is_the_recipe_s_output(tmp_path: Path) -> None:
    result = run_recipe(_recipe("touch deep-image.fits"), cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert str(result.outputs["image"]) == "deep-image.fits"


def test_an_optional_recipe_output_keeps_the_name_made_or_not(tmp_path: Path) -> None:
    result = run_recipe(_recipe("true", Maybe), cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert str(result.outputs["image"]) == "deep-image.fits"


def test_a_nested_recipe_s_unmade_output_fails_its_step(tmp_path: Path) -> None:
    outer = Recipe("outer", ImageIn, Maybe)
    outer.add_step("sub", _recipe("true", name="inner"), prefix=outer.inputs.prefix)
    result = run_recipe(outer, cwd=tmp_path, use_cache=False)
    assert result.status == "failed"
    assert result.failed_step == "sub"
    assert "recipe 'inner': its output 'image' names 'deep-image.fits'" in (result.error or "")


class Wrote(BaseModel):
    product: File | None = None


def test_a_wrangled_path_never_made_fails_a_required_recipe_output(tmp_path: Path) -> None:
    said = Cab(
        "said",
        ["echo", "wrote ghost.txt"],
        BaseModel,
        Wrote,
        wranglers=[Wrangler(r"wrote (\S+)", "output", output="product")],
    )

    class Out(BaseModel):
        product: File

    recipe = Recipe("w", BaseModel, Out)
    recipe.add_step("said", said)
    recipe.set_output("product", recipe.outputs.said.product)
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.status == "failed"
    assert (result.error or "").startswith(
        "recipe 'w': its output 'product' names 'ghost.txt', which does not exist"
    )


class ScatterIn(BaseModel):
    prefixes: list[str]


def _scattered(outputs: type[BaseModel]) -> Recipe:
    """Each slice images its prefix; only prefix ``a`` converges and writes its image."""
    recipe = Recipe("s", ScatterIn, outputs)
    script = 'test "$0" = a && touch "$0-image.fits"; true'
    imager = Cab(
        "imager",
        ["sh", "-c", script],
        ImageIn,
        ImageOut,
        {
            "prefix": ParamMeta(positional=True),
            "restored": ParamMeta(implicit="{prefix}-image.fits"),
        },
    )
    recipe.add_step("image", imager, scatter=["prefix"], prefix=recipe.inputs.prefixes)
    recipe.set_output("images", recipe.outputs.image.restored)
    return recipe


def test_a_list_output_whose_items_take_none_may_name_unmade_products(tmp_path: Path) -> None:
    """``list[File | None]`` says any item may be missing, default or not: the run
    reported success and then failed it, naming the slice's file."""

    class Some(BaseModel):
        images: list[File | None]

    result = run_recipe(_scattered(Some), {"prefixes": ["a", "b"]}, cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert [str(p) for p in result.outputs["images"]] == ["a-image.fits", "b-image.fits"]


def test_a_list_of_required_files_still_fails_on_an_unmade_one(tmp_path: Path) -> None:
    class Every(BaseModel):
        images: list[File]

    result = run_recipe(_scattered(Every), {"prefixes": ["a", "b"]}, cwd=tmp_path, use_cache=False)
    assert result.status == "failed"
    assert (result.error or "").startswith(
        "recipe 's': its output 'images' names 'b-image.fits', which does not exist"
    )


def test_a_required_output_that_takes_none_may_name_an_unmade_product(tmp_path: Path) -> None:
    class NoDefault(BaseModel):
        image: File | None

    result = run_recipe(_recipe("true", NoDefault), cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert str(result.outputs["image"]) == "deep-image.fits"
