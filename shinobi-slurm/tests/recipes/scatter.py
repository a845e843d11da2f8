"""A scattered step and the step that gathers its slices' outputs.

``convert`` runs once per source file (a job array on Slurm) and writes
``<src>.out`` (an implicit template, so each slice's output is known before
it runs); ``combine`` takes the list of all of them.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.steps import Cab, InputRef, OutputRef, ParamMeta, Recipe, StepRef

CONVERT = 'echo "converted $1 as task ${SLURM_ARRAY_TASK_ID:-none}" > "$1.out"'
COMBINE = 'out="$1"; shift; cat "$@" > "$out"'


class FanInputs(BaseModel):
    sources: list[Path]
    total: Path


class ConvertIn(BaseModel):
    src: Path


class ConvertOut(BaseModel):
    dst: Path | None = None


class CombineIn(BaseModel):
    total: Path
    parts: list[Path]


class CombineOut(BaseModel):
    total: Path | None = None


convert = Cab(
    name="convert",
    command=["/bin/sh", "-c", CONVERT, "convert"],
    inputs_model=ConvertIn,
    outputs_model=ConvertOut,
    field_meta={"src": ParamMeta(positional=True), "dst": ParamMeta(implicit="{src}.out")},
)
combine = Cab(
    name="combine",
    command=["/bin/sh", "-c", COMBINE, "combine"],
    inputs_model=CombineIn,
    outputs_model=CombineOut,
    field_meta={"total": ParamMeta(positional=True), "parts": ParamMeta(positional=True)},
)

fan = Recipe(
    name="fan",
    inputs_model=FanInputs,
    outputs_model=CombineOut,
    steps=[
        StepRef("convert", convert, {"src": InputRef("sources")}, scatter=("src",)),
        StepRef(
            "combine",
            combine,
            {"total": InputRef("total"), "parts": OutputRef("convert", "dst")},
        ),
    ],
    output_wiring={"total": OutputRef("combine", "total")},
)
