"""Recipes ``ninja compile`` must refuse, one per rule, and one breaking them all.

Each needs live Python somewhere: an orchestration function, a virtualenv,
a MUTABLE input that is not a path, a value other than a known path handed
between steps (a wrangler's match), a loop that names its outputs per cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shinobi.steps import (
    Cab,
    InputRef,
    OutputRef,
    ParamMeta,
    Recipe,
    StepRef,
    Wrangler,
    pystep,
    step,
)


class PathIn(BaseModel):
    path: Path


class PathOut(BaseModel):
    path: Path | None = None


class CountOut(BaseModel):
    count: int | None = None


class CountIn(BaseModel):
    count: int | None = None


class StateIn(BaseModel):
    state: dict[str, Any] = {}


touch = Cab(
    name="touch",
    command="/bin/touch",
    inputs_model=PathIn,
    outputs_model=PathOut,
    field_meta={"path": ParamMeta(positional=True)},
)
counter = Cab(
    name="counter",
    command=["/bin/echo", "found 7 sources"],
    outputs_model=CountOut,
    wranglers=[Wrangler(r"found (\d+) sources", "output", output="count")],
)
use_count = Cab(name="use_count", command="/bin/echo", inputs_model=CountIn)
mutate_state = Cab(
    name="mutate_state",
    command="/bin/true",
    inputs_model=StateIn,
    field_meta={"state": ParamMeta(skip=True, mutable=True)},
)


@step(touch)
def retouch(ctx: Any) -> Any:
    """Runs touch twice: what happens is decided by Python at run time."""
    ctx.run()
    return ctx.run()


@pystep
def summarise(path: Path) -> str:
    return path.read_text()


orchestrated = Recipe(
    name="orchestrated",
    inputs_model=PathIn,
    steps=[StepRef("retouch", retouch, {"path": InputRef("path")})],
)
in_venv = Recipe(
    name="in_venv",
    inputs_model=PathIn,
    steps=[StepRef("touch", touch, {"path": InputRef("path")}, venv="/opt/venvs/tools")],
)
mutable_object = Recipe(
    name="mutable_object",
    steps=[StepRef("mutate", mutate_state, {"state": {"n": 1}})],
)
crossing = Recipe(
    name="crossing",
    steps=[
        StepRef("count", counter, {}),
        StepRef("use", use_count, {"count": OutputRef("count", "count")}),
    ],
)


class CycleIn(BaseModel):
    prefix: str
    index: int = 0


class CycleOut(BaseModel):
    image: Path | None = None
    done: Path | None = None


cycle = Cab(
    name="cycle",
    command="/bin/touch",
    inputs_model=CycleIn,
    outputs_model=CycleOut,
    field_meta={
        "prefix": ParamMeta(skip=True),
        "index": ParamMeta(skip=True),
        "image": ParamMeta(implicit="{prefix}-{index}.fits"),
        "done": ParamMeta(implicit="{prefix}.done"),
    },
)
per_cycle = Recipe(name="per_cycle", outputs_model=CycleOut)
_loop = per_cycle.add_loop(
    "cycles", cycle, max_iter=3, until="done", index_input="index", prefix="img"
)

everything = Recipe(
    name="everything",
    inputs_model=PathIn,
    steps=[
        StepRef("retouch", retouch, {"path": InputRef("path")}),
        StepRef("touch", touch, {"path": InputRef("path")}, venv="/opt/venvs/tools"),
        StepRef("mutate", mutate_state, {"state": {"n": 1}}),
        StepRef("count", counter, {}),
        StepRef("use", use_count, {"count": OutputRef("count", "count")}),
        StepRef("summarise", summarise, {"path": OutputRef("touch", "path")}),
    ],
)
