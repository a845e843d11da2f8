"""Compiled jobs check what a recipe promises, as ``ninja run`` does.

``ninja run`` fails a recipe whose required path output is not there once its
steps are done: ``set_output`` may wire it to an output the cab leaves optional
(an implicit name the tool made only on request). The compiled jobs checked
only the cabs' required outputs, so the same recipe's launch completed.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel
from test_offload_fixtures import plan_of

from shinobi.offload.base import CompileOptions, Workflow, compile_jobs
from shinobi.offload.jobs import build_jobs
from shinobi.steps import MS, Cab, File, ParamMeta, Recipe


class ImIn(BaseModel):
    ms: MS


class ImOut(BaseModel):
    image: File
    psf: File | None = None  # optional: the imager makes it only on request


image = Cab(
    "image",
    ["/bin/imager"],
    ImIn,
    ImOut,
    {
        "ms": ParamMeta(positional=True),
        "image": ParamMeta(implicit="{ms.stem}-image.fits"),
        "psf": ParamMeta(implicit="{ms.stem}-psf.fits"),
    },
)


class RIn(BaseModel):
    ms: MS


class ROut(BaseModel):
    image: File
    psf: File  # required: the recipe promises it


class ROptional(BaseModel):
    image: File
    psf: File | None = None


def imaging(name: str = "r1", outputs: type[BaseModel] = ROut) -> Recipe:
    recipe = Recipe(name, RIn, outputs)
    recipe.add_step("image", image, ms=recipe.inputs.ms)
    recipe.set_output("image", recipe.outputs.image.image)
    recipe.set_output("psf", recipe.outputs.image.psf)
    return recipe


def test_the_job_checks_an_optional_output_a_required_recipe_output_takes() -> None:
    (job,) = build_jobs(plan_of(imaging(), {"ms": "obs.ms"}), "/w", "run").jobs
    assert job.expected == [
        [("image", "/w/obs-image.fits", "file"), ("psf", "/w/obs-psf.fits", "file")]
    ]
    assert job.promised == [
        "after its tool, checks its output 'psf': recipe 'r1' requires it as its output 'psf'"
    ]


def test_an_optional_recipe_output_adds_no_check() -> None:
    plan = plan_of(imaging(outputs=ROptional), {"ms": "obs.ms"})
    (job,) = build_jobs(plan, "/w", "run").jobs
    assert job.expected == [[("image", "/w/obs-image.fits", "file")]] and not job.promised


def test_through_a_nested_recipe_the_inner_step_checks_it() -> None:
    """The outer recipe requires what the nested one leaves optional."""
    inner = imaging("inner", ROptional)
    outer = Recipe("outer", RIn, ROut)
    outer.add_step("in", inner, ms=outer.inputs.ms)
    outer.set_output("image", outer.outputs["in"].image)
    outer.set_output("psf", outer.outputs["in"].psf)
    (job,) = build_jobs(plan_of(outer, {"ms": "obs.ms"}), "/w", "run").jobs
    assert job.name == "in.image"
    assert ("psf", "/w/obs-psf.fits", "file") in job.expected[0]
    assert job.promised == [
        "after its tool, checks its output 'psf': recipe 'outer' requires it as its output 'psf'"
    ]


def test_a_nested_recipe_that_requires_it_itself_is_checked_too() -> None:
    outer = Recipe("outer", RIn, ROptional)
    outer.add_step("in", imaging("inner"), ms=outer.inputs.ms)
    outer.set_output("image", outer.outputs["in"].image)
    (job,) = build_jobs(plan_of(outer, {"ms": "obs.ms"}), "/w", "run").jobs
    assert ("psf", "/w/obs-psf.fits", "file") in job.expected[0]
    assert "recipe 'inner' requires it" in job.promised[0]


class ManyIn(BaseModel):
    mss: list[MS]


class ManyOut(BaseModel):
    psfs: list[File]


def test_a_scatter_checks_each_slice_its_own_file() -> None:
    recipe = Recipe("many", ManyIn, ManyOut)
    recipe.add_step("image", image, scatter=["ms"], ms=recipe.inputs.mss)
    recipe.set_output("psfs", recipe.outputs.image.psf)
    (job,) = build_jobs(plan_of(recipe, {"mss": ["a.ms", "b.ms"]}), "/w", "run").jobs
    assert [[e for e in task if e[0] == "psf"] for task in job.expected] == [
        [("psf", "/w/a-psf.fits", "file")],
        [("psf", "/w/b-psf.fits", "file")],
    ]
    assert job.promised[0].startswith("after its tool, checks each slice's output 'psf'")


def test_explain_says_so() -> None:
    options = CompileOptions(workdir=Path("/w"), cwd=Path("/w"), run_id="run")
    jobs = compile_jobs(plan_of(imaging(), {"ms": "obs.ms"}, cwd="/w"), options)
    workflow = Workflow(engine="test", options=options, jobs=jobs)
    assert (
        "    after its tool, checks its output 'psf': recipe 'r1' requires it as its output 'psf'"
        in workflow.explain()
    )
