"""Steps that take a while: for interrupting runs and for watching one poller serve many jobs.

``sleepy``: one step that notes it started, then sleeps. ``half``: the same, having
written part of its product first. ``parallel``: four independent steps of a few
seconds each, run with max_workers=4.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.steps import Cab, File, InputRef, ParamMeta, Recipe, StepRef


class SleepIn(BaseModel):
    marker: Path
    seconds: int = 300


sleeper = Cab(
    name="sleeper",
    command=["/bin/sh", "-c", ': > "$1"; sleep "$2"', "sleeper"],
    inputs_model=SleepIn,
    field_meta={"marker": ParamMeta(positional=True), "seconds": ParamMeta(positional=True)},
)

sleepy = Recipe(
    name="sleepy",
    inputs_model=SleepIn,
    steps=[
        StepRef("sleep", sleeper, {"marker": InputRef("marker"), "seconds": InputRef("seconds")})
    ],
)


class HalfIn(BaseModel):
    marker: Path
    out: Path


class HalfOut(BaseModel):
    out: File | None = None


half_writer = Cab(
    name="half_writer",
    command=["/bin/sh", "-c", 'echo part > "$2"; : > "$1"; sleep 300', "half_writer"],
    inputs_model=HalfIn,
    outputs_model=HalfOut,
    field_meta={"marker": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
)

half = Recipe(
    name="half",
    inputs_model=HalfIn,
    steps=[StepRef("write", half_writer, {"marker": InputRef("marker"), "out": InputRef("out")})],
)


class ParallelIn(BaseModel):
    seconds: int = 4


parallel = Recipe(
    name="parallel",
    inputs_model=ParallelIn,
    max_workers=4,
    steps=[
        StepRef(
            f"nap{i}",
            sleeper,
            {"marker": Path(f"nap{i}.started"), "seconds": InputRef("seconds")},
        )
        for i in range(4)
    ],
)
