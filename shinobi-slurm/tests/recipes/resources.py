"""A step that declares 2.5 CPUs and reports what Slurm gave it (3: a part of a CPU
is rounded up, never down)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.resources import Resources
from shinobi.steps import Cab, InputRef, ParamMeta, Recipe, StepRef


class ReportIn(BaseModel):
    report: Path


report = Cab(
    name="report",
    command=["/bin/sh", "-c", 'echo "cpus=$SLURM_CPUS_PER_TASK" > "$1"', "report"],
    inputs_model=ReportIn,
    field_meta={"report": ParamMeta(positional=True)},
)

fractional_cpus = Recipe(
    name="fractional_cpus",
    inputs_model=ReportIn,
    steps=[
        StepRef("report", report, {"report": InputRef("report")}, resources=Resources(cpus=2.5))
    ],
)
