"""A required list output a harvest glob collects fails the step when the glob
matches nothing, as a required single one does: the step passed with an empty
list, and its dependants ran on nothing."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class Shot(BaseModel):
    script: str


class Images(BaseModel):
    images: list[File]


class MaybeImages(BaseModel):
    images: list[File] = []


_META = {"script": ParamMeta(positional=True), "images": ParamMeta(harvest="img-*.fits")}


def _shoot(tmp_path: Path, outputs: type[BaseModel], script: str) -> tuple[str, str | None, object]:
    recipe = Recipe("r")
    recipe.add_step("shoot", Cab("shoot", "sh -c", Shot, outputs, _META), script=script)
    step = run_recipe(recipe, cwd=tmp_path, use_cache=False).steps[0]
    return step.status, step.error, step.outputs.get("images")


def test_a_required_list_whose_harvest_matched_nothing_fails_the_step(tmp_path: Path) -> None:
    assert _shoot(tmp_path, Images, "true")[:2] == (
        "failed",
        "output 'images': nothing matched its harvest pattern 'img-*.fits' (the tool made no"
        " such file)",
    )


def test_a_required_list_gets_every_match(tmp_path: Path) -> None:
    found = _shoot(tmp_path, Images, "touch img-a.fits img-b.fits")
    assert found == ("ok", None, [Path("img-a.fits"), Path("img-b.fits")])


def test_an_optional_list_may_match_nothing(tmp_path: Path) -> None:
    assert _shoot(tmp_path, MaybeImages, "true") == ("ok", None, [])
