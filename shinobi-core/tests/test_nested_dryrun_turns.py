"""The dry run of a scattered nested recipe says its slices take turns, as the run does.

It drew the slices as independent (it looked at the slice's own paths, which a
nested recipe keeps in its steps) while the run served them one at a time.
"""

from __future__ import annotations

from pydantic import BaseModel
from test_offload_fixtures import plan_of
from test_output_folder import MSS, ManyIn, ManyOut, imager, mosaic

from shinobi.render.dryrun import slices_take_turns
from shinobi.steps import MS, Directory, File, Recipe


class FieldIn(BaseModel):
    ms: MS
    outdir: Directory


class FieldOut(BaseModel):
    image: File


def survey(*, inner_reads_folder: bool) -> Recipe:
    field = Recipe("field", FieldIn, FieldOut)
    field.add_step("img", imager(), ms=field.inputs.ms, outdir=field.inputs.outdir)
    if inner_reads_folder:
        field.add_step("mos", mosaic, imgs=field.inputs.outdir, tag=field.inputs.ms)
    field.set_output("image", field.outputs.img.image)
    outer = Recipe("survey", ManyIn, ManyOut, max_workers=4)
    outer.add_step("fld", field, scatter=["ms"], ms=outer.inputs.mss, outdir=outer.inputs.outdir)
    outer.set_output("images", outer.outputs.fld.image)
    return outer


def test_a_scattered_nested_recipe_imaging_into_one_folder_is_free_in_the_dry_run() -> None:
    step = plan_of(survey(inner_reads_folder=False), MSS, "/data").steps[0]
    assert slices_take_turns(step) is None


def test_the_dry_run_says_a_scattered_nested_recipe_s_slices_take_turns() -> None:
    """It drew them as independent while the run served them one at a time."""
    step = plan_of(survey(inner_reads_folder=True), MSS, "/data").steps[0]
    said = slices_take_turns(step)
    assert said is not None and "its slices run one at a time" in said
    assert "/data/imgs" in said
