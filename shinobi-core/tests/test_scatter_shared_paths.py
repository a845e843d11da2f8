"""Scatter slices that would rewrite one path run one at a time, even at many workers."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe

# Records its own start and end, and appends a line to its second argument.
SCRIPT = 'date +%s.%N > "$1.start"; sleep 0.3; echo "$1" >> "$2"; date +%s.%N > "$1.end"'


class In(BaseModel):
    stamp: str
    data: File


class Out(BaseModel):
    product: File | None = None


def cab(**meta: ParamMeta) -> Cab:
    return Cab(
        "append",
        ["/bin/sh", "-c", SCRIPT, "append"],
        In,
        Out,
        {"stamp": ParamMeta(positional=True), "data": ParamMeta(positional=True), **meta},
    )


class Stamps(BaseModel):
    stamps: list[str]
    data: File


def fan(tool: Cab, tmp_path: Path) -> tuple[Recipe, list[str]]:
    recipe = Recipe("fan", Stamps, max_workers=3)
    recipe.add_step(
        "append", tool, scatter=["stamp"], stamp=recipe.inputs.stamps, data=recipe.inputs.data
    )
    return recipe, [str(tmp_path / f"s{k}") for k in range(3)]


def spans(stamps: list[str]) -> list[tuple[float, float]]:
    read = [(Path(f"{s}.start").read_text(), Path(f"{s}.end").read_text()) for s in stamps]
    return sorted((float(a), float(b)) for a, b in read)


def run(recipe: Recipe, stamps: list[str], data: Path) -> Any:
    config = load_config({"execution.max_workers": 3, "cache.enabled": False})
    result = run_recipe(
        recipe, {"stamps": stamps, "data": str(data)}, cwd=data.parent, config=config
    )
    assert result.ok, result.error
    return result


def test_slices_rewriting_one_input_in_place_take_turns(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("")
    recipe, stamps = fan(cab(data=ParamMeta(positional=True, mutable=True)), tmp_path)
    result = run(recipe, stamps, data)
    for a, b in itertools.pairwise(spans(stamps)):
        assert a[1] <= b[0], "two slices rewrote data.txt at once"
    assert sorted(data.read_text().split()) == stamps
    assert any(
        f"step 'append': its slices run one at a time: more than one uses {data}" in w
        for w in result.warnings
    ), result.warnings


def test_slices_producing_one_output_are_named_and_take_turns(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("")
    recipe, stamps = fan(cab(product=ParamMeta(implicit="{data}")), tmp_path)
    result = run(recipe, stamps, data)
    for a, b in itertools.pairwise(spans(stamps)):
        assert a[1] <= b[0]
    said = [w for w in result.warnings if "both write" in w]
    assert said and f"slices [0] and [1] both write {data}" in said[0], result.warnings
    assert "give each slice its own output path" in said[0]


def test_slices_that_only_read_one_file_still_overlap(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_text("")
    reader = cab(data=ParamMeta(positional=True, writable=False))
    recipe = Recipe("fan", Stamps, max_workers=3)
    recipe.add_step(
        "read", reader, scatter=["stamp"], stamp=recipe.inputs.stamps, data=recipe.inputs.data
    )
    stamps = [str(tmp_path / f"s{k}") for k in range(3)]
    result = run(recipe, stamps, data)
    found = spans(stamps)
    assert max(start for start, _ in found) < min(end for _, end in found)
    assert not any("one at a time" in w for w in result.warnings), result.warnings


class TagData(BaseModel):
    stamp: str
    data: File


def test_a_scattered_nested_recipe_whose_steps_rewrite_one_input_takes_turns(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data.txt"
    data.write_text("")
    inner = Recipe("inner", TagData)
    inner.add_step(
        "append",
        cab(data=ParamMeta(positional=True, mutable=True)),
        stamp=inner.inputs.stamp,
        data=inner.inputs.data,
    )
    outer = Recipe("outer", Stamps, max_workers=3)
    outer.add_step("n", inner, scatter=["stamp"], stamp=outer.inputs.stamps, data=outer.inputs.data)
    stamps = [str(tmp_path / f"s{k}") for k in range(3)]
    result = run(outer, stamps, data)
    for a, b in itertools.pairwise(spans(stamps)):
        assert a[1] <= b[0], "two slices of the nested recipe rewrote data.txt at once"
    assert any("step 'n': its slices run one at a time" in w for w in result.warnings)


class PrefixIn(BaseModel):
    stamp: str


class Images(BaseModel):
    image: File | None = None
    products: list[File] = []


def test_slices_harvesting_their_own_globs_in_one_directory_still_overlap(
    tmp_path: Path,
) -> None:
    """``{prefix}-*.fits`` per slice wrote into the working directory: every slice of a
    wsclean-like cab was run in turn, and compiled arrays got ``%1``."""
    imager = Cab(
        "imager",
        [
            "/bin/sh",
            "-c",
            'date +%s.%N > "$0.start"; sleep 0.3; touch "$0-image.fits"; date +%s.%N > "$0.end"',
        ],
        PrefixIn,
        Images,
        {
            "stamp": ParamMeta(positional=True),
            "image": ParamMeta(implicit="{stamp}-image.fits"),
            "products": ParamMeta(harvest="{stamp}-*.fits"),
        },
    )
    recipe = Recipe("fan", Stamps, max_workers=3)
    recipe.add_step("image", imager, scatter=["stamp"], stamp=recipe.inputs.stamps)
    stamps = [str(tmp_path / f"s{k}") for k in range(3)]
    data = tmp_path / "data.txt"
    data.write_text("")
    result = run(recipe, stamps, data)
    found = spans(stamps)
    assert max(start for start, _ in found) < min(end for _, end in found)
    assert not any("one at a time" in w for w in result.warnings), result.warnings
    assert not any("harvest pattern" in w for w in result.warnings), result.warnings


@pytest.mark.parametrize("workers", [1, 2])
def test_a_slice_whose_harvest_glob_matches_another_slice_s_files_is_said(
    tmp_path: Path, workers: int
) -> None:
    """``img-*.fits`` took ``img-deep-image.fits`` of the next slice as its own, silently."""
    imager = Cab(
        "imager",
        ["/bin/sh", "-c", 'touch "$0-image.fits"'],
        PrefixIn,
        Images,
        {"stamp": ParamMeta(positional=True), "products": ParamMeta(harvest="{stamp}-*.fits")},
    )
    recipe = Recipe("fan", Stamps, max_workers=workers)
    recipe.add_step("image", imager, scatter=["stamp"], stamp=recipe.inputs.stamps)
    result = run(recipe, ["img", "img-deep"], tmp_path / "data.txt")
    (said,) = [w for w in result.warnings if "harvest pattern" in w]
    assert said.startswith(
        "step 'image': the harvest pattern 'img-*.fits' of slice 0 also matches the files"
        " 'img-deep-*.fits' of slice 1 collects"
    )


def test_one_harvest_pattern_for_every_slice_is_said_and_subdirectories_are_not() -> None:
    """The same glob in every slice collected every slice's files, with no word;
    ``img/*.fits`` beside ``img/deep/*.fits`` was warned about, though glob's ``*``
    never crosses a ``/``."""
    from shinobi.backends.base import PathUse
    from shinobi.shared_slices import harvests_overlapping

    def slices(*patterns: str) -> list[list[PathUse]]:
        return [[PathUse(f"/w/{p}", "output", "made", "any", pattern=True)] for p in patterns]

    said = harvests_overlapping("fx", slices("out-*.txt", "out-*.txt"), "/w")
    assert said is not None and "'out-*.txt' of slice 0 is slice 1's too" in said
    assert harvests_overlapping("mk", slices("img/*.fits", "img/deep/*.fits"), "/w") is None
    assert harvests_overlapping("mk", slices("a.*.fits", "b.*.fits"), "/w") is None
