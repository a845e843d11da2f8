"""An output declared a File that the tool made a directory (or a Directory or MS
made a file) fails the step: it is not the product the next step reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from shinobi.runner import run_recipe
from shinobi.steps import MS, Cab, Directory, File, ParamMeta, Recipe


class MakeIn(BaseModel):
    script: str


def _made(tmp_path: Path, script: str, kind: object) -> tuple[str, str | None]:
    out_model = type("Out", (BaseModel,), {"__annotations__": {"out": kind}})
    meta = {"script": ParamMeta(positional=True), "out": ParamMeta(implicit="product")}
    cab = Cab("make", "sh -c", MakeIn, out_model, meta)
    recipe = Recipe("r")
    recipe.add_step("make", cab, script=script)
    step = run_recipe(recipe, cwd=tmp_path, use_cache=False).steps[0]
    return step.status, step.error


@pytest.mark.parametrize(
    ("script", "kind", "said"),
    [
        ("mkdir product", File, "'product' is a directory, but the output is declared a File"),
        (
            "touch product",
            Directory,
            "'product' is not a directory, but the output is declared a Directory",
        ),
        ("touch product", MS, "'product' is not a directory, but the output is declared an MS"),
    ],
)
def test_an_output_of_the_wrong_kind_fails_the_step(
    tmp_path: Path, script: str, kind: object, said: str
) -> None:
    status, error = _made(tmp_path, script, kind)
    assert status == "failed"
    assert error == f"output 'out': {said}"


@pytest.mark.parametrize(
    ("script", "kind"),
    [("touch product", File), ("mkdir product", Directory), ("mkdir product", MS)],
)
def test_an_output_of_the_declared_kind_is_fine(tmp_path: Path, script: str, kind: object) -> None:
    assert _made(tmp_path, script, kind) == ("ok", None)


def test_a_missing_output_still_says_the_tool_did_not_create_it(tmp_path: Path) -> None:
    assert _made(tmp_path, "true", File) == (
        "failed",
        "output 'out': the tool did not create 'product'",
    )


def test_a_required_harvest_that_matched_nothing_names_its_pattern(tmp_path: Path) -> None:
    """It failed with pydantic's "Input is not a valid path ... (got None)"."""

    class Images(BaseModel):
        image: File

    meta = {"script": ParamMeta(positional=True), "image": ParamMeta(harvest="img-*.fits")}
    recipe = Recipe("r")
    recipe.add_step("shoot", Cab("shoot", "sh -c", MakeIn, Images, meta), script="true")
    step = run_recipe(recipe, cwd=tmp_path, use_cache=False).steps[0]
    assert (step.status, step.error) == (
        "failed",
        "output 'image': nothing matched its harvest pattern 'img-*.fits' (the tool made no"
        " such file)",
    )


def test_a_harvest_in_a_folder_whose_name_is_a_glob_finds_the_files(tmp_path: Path) -> None:
    """In ``obs [1]`` the folder's name was read as a pattern: the list came back
    empty, a step downstream ran on nothing, and a required one failed."""
    from shinobi.config import load_config

    class Images(BaseModel):
        image: File
        every: list[File] = []

    meta = {
        "script": ParamMeta(positional=True),
        "image": ParamMeta(harvest="img-*.fits"),
        "every": ParamMeta(harvest="img-*.fits"),
    }
    recipe = Recipe("r")
    shoot = Cab("shoot", "sh -c", MakeIn, Images, meta)
    recipe.add_step("shoot", shoot, script="touch img-a.fits img-b.fits")
    here = tmp_path / "obs [1]"
    here.mkdir()
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    statuses = []
    for _ in range(2):
        step = run_recipe(recipe, cwd=here, config=config).steps[0]
        statuses.append(step.status)
        assert step.error is None
        assert step.outputs["image"] == Path("img-a.fits")
        assert step.outputs["every"] == [Path("img-a.fits"), Path("img-b.fits")]
    assert statuses == ["ok", "cached"]  # the entry's glob record matches again


def test_an_output_with_an_alias_is_filled_and_wired_by_its_name(tmp_path: Path) -> None:
    """A cab's outputs model (and a recipe's) with ``Field(alias=...)`` failed every
    run: "output 'Made': Field required", as outputs are gathered by field name."""

    class Named(BaseModel):
        name: str

    class Made(BaseModel):
        made: Path = Field(alias="Made")

    class Out(BaseModel):
        out: Path = Field(alias="OUT")

    meta = {"name": ParamMeta(positional=True), "made": ParamMeta(implicit="{name}")}
    cab = Cab("touch", ["touch"], Named, Made, meta)
    recipe = Recipe("r", None, Out)
    recipe.add_step("t", cab, name="x.txt")
    recipe.set_output("out", recipe.outputs.t.made)
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    assert result.steps[0].outputs == {"made": Path("x.txt")}
    assert result.outputs == {"out": Path("x.txt")}
