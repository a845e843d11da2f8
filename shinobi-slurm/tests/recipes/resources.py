"""A step that declares 3 CPUs and reports what Slurm gave it."""

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

three_cpus = Recipe(
    name="three_cpus",
    inputs_model=ReportIn,
    steps=[StepRef("report", report, {"report": InputRef("report")}, resources=Resources(cpus=3))],
)
