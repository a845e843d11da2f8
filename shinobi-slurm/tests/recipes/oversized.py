"""A first step any node can run, then one that asks more memory than any node has."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.resources import Resources
from shinobi.steps import Cab, InputRef, ParamMeta, Recipe, StepRef


class MarkerIn(BaseModel):
    marker: Path


touch = Cab("touch", "/bin/touch", MarkerIn, field_meta={"marker": ParamMeta(positional=True)})

oversized = Recipe(
    "oversized",
    MarkerIn,
    steps=[
        StepRef("first", touch, {"marker": InputRef("marker")}),
        StepRef(
            "huge", touch, {"marker": InputRef("marker")}, resources=Resources(memory="100TiB")
        ),
    ],
)
