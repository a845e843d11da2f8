"""A harvest glob that also matches an earlier run's products.

``img-*.fits`` matches last week's images as well as this run's: a single
``File`` output handed on the first in sort order, whichever run made it,
and a list took both runs' files as this one's, without a word, and cached
them so.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class In(BaseModel):
    count: int = 1


class One(BaseModel):
    image: File


class Many(BaseModel):
    images: list[File]


def _recipe(outputs: type[BaseModel], script: str) -> Recipe:
    name = next(iter(outputs.model_fields))
    imager = Cab(
        "imager",
        ["sh", "-c", script, "imager"],
        In,
        outputs,
        {"count": ParamMeta(positional=True), name: ParamMeta(harvest="img-*.fits")},
    )
    recipe = Recipe("r", In, outputs)
    recipe.add_step("image", imager, count=recipe.inputs.count)
    recipe.set_output(name, getattr(recipe.outputs.image, name))
    return recipe


def _left_by_an_earlier_run(*paths: Path) -> None:
    """Files clearly older than the step (their change time too: a tick of the
    clock is 50 ms at most, see ``shinobi.untouched_outputs``)."""
    for path in paths:
        path.write_text("old")
    time.sleep(0.1)


def test_a_single_output_takes_the_file_the_step_wrote(tmp_path: Path) -> None:
    _left_by_an_earlier_run(tmp_path / "img-a.fits")
    result = run_recipe(_recipe(One, "echo new > img-b.fits"), cwd=tmp_path)
    assert result.status == "ok", result.error
    assert str(result.outputs["image"]) == "img-b.fits"
    assert result.steps[0].warnings == []


def test_a_list_that_took_older_files_says_so_and_is_not_cached(tmp_path: Path) -> None:
    _left_by_an_earlier_run(tmp_path / "img-3.fits", tmp_path / "img-4.fits")
    script = 'for i in $(seq 1 "$1"); do echo new > "img-$i.fits"; done'
    recipe = _recipe(Many, script)
    first = run_recipe(recipe, {"count": 2}, cwd=tmp_path)
    assert first.status == "ok", first.error
    assert [str(p) for p in first.outputs["images"]] == [f"img-{i}.fits" for i in (1, 2, 3, 4)]
    assert first.steps[0].warnings == [
        "output 'images': its harvest pattern 'img-*.fits' also took 2 file(s) that were there,"
        " as they are, before the step started (an earlier run's, or another step's?):"
        " 'img-3.fits', 'img-4.fits'; remove them or narrow the pattern; this result is not"
        " cached"
    ]
    again = run_recipe(recipe, {"count": 2}, cwd=tmp_path)
    assert again.steps[0].status == "ok"  # run again, not replayed from the cache


def test_a_list_whose_every_file_the_step_rewrote_says_nothing(tmp_path: Path) -> None:
    _left_by_an_earlier_run(tmp_path / "img-1.fits", tmp_path / "img-2.fits")
    script = 'for i in $(seq 1 "$1"); do echo new > "img-$i.fits"; done'
    result = run_recipe(_recipe(Many, script), {"count": 2}, cwd=tmp_path)
    assert result.status == "ok", result.error
    assert result.steps[0].warnings == []
