"""Steps that take a while: for interrupting runs and for watching one poller serve many jobs.

``sleepy``: one step that notes it started, then sleeps. ``parallel``: four
independent steps of a few seconds each, run with max_workers=4.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.steps import Cab, InputRef, ParamMeta, Recipe, StepRef


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
