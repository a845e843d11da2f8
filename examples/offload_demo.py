"""The smallest offloadable recipe: ``make`` touches a file, ``use`` reads it.

ninja run examples/offload_demo.py:pipe --target /tmp/made.ms
ninja run examples/offload_demo.py:pipe --target /tmp/made.ms --dryrun
ninja compile examples/offload_demo.py:pipe --target /scratch/made.ms --container-runtime none
"""

from pathlib import Path

from pydantic import BaseModel, Field

from shinobi.steps import Cab, InputRef, OutputRef, ParamMeta, Recipe, StepRef


class PipeInputs(BaseModel):
    target: Path = Field(Path("made.ms"), description="the file make creates and use reads")


class TouchInputs(BaseModel):
    out: Path


class PathOutputs(BaseModel):
    out: Path | None = None


class CatInputs(BaseModel):
    f: Path | None = None


class OkOutputs(BaseModel):
    ok: bool = True


make = Cab(
    name="make",
    command="/bin/touch",
    inputs_model=TouchInputs,
    outputs_model=PathOutputs,
    field_meta={"out": ParamMeta(positional=True)},
)
use = Cab(
    name="use",
    command="/bin/cat",
    inputs_model=CatInputs,
    outputs_model=OkOutputs,
    field_meta={"f": ParamMeta(positional=True)},
)

pipe = Recipe(
    name="pipe",
    inputs_model=PipeInputs,
    outputs_model=OkOutputs,
    steps=[
        # make.out <- the recipe's own `target` input
        StepRef(name="make", step=make, wiring={"out": InputRef(field="target")}),
        # use.f <- make.out: this OutputRef is the dependency edge
        StepRef(name="use", step=use, wiring={"f": OutputRef(step="make", field="out")}),
    ],
    output_wiring={"ok": OutputRef(step="use", field="ok")},
)
