"""A thousand independent steps, each touching its own file: a launch of 1,000 jobs."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.steps import Cab, ParamMeta, Recipe, StepRef


class TouchIn(BaseModel):
    path: Path


touch = Cab(
    name="touch",
    command="/bin/touch",
    inputs_model=TouchIn,
    field_meta={"path": ParamMeta(positional=True)},
)

thousand = Recipe(
    name="thousand",
    steps=[StepRef(f"t{i:04d}", touch, {"path": Path(f"f{i:04d}")}) for i in range(1000)],
)
