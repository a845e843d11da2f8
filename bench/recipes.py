"""The recipes the benchmark suite runs, generated at whatever size is asked for.

Every step is ``/bin/touch`` of a file named by a relative path, so a recipe
runs in whichever directory it is started from (the suite uses a fresh temp
directory) and costs the tool almost nothing: what is left is shinobi's own
overhead. Three shapes:

* ``touch_N``: N independent steps, each touching its own file; what the run
  benchmarks and the step cache benchmark execute, serially or in parallel.
* ``chain_N``: step i touches step i-1's file and its own, so every step waits
  on the one before it (one step per wavefront row).
* ``fanout_N``: one root step, then N-1 steps that each read the root's file
  (one very wide row).

Targets such as ``ninja run bench/recipes.py:touch_1000`` resolve through the
module ``__getattr__`` below, so a recipe is built only when it is named and
loading this file for a 100-step run does not build the 100,000-step ones.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shinobi.steps import Cab, OutputRef, ParamMeta, Recipe, StepRef

__all__ = [
    "SHAPES",
    "TARGETS",
    "chain_recipe",
    "fanout_recipe",
    "file_name",
    "touch_recipe",
]


class TouchInputs(BaseModel):
    """``after`` is an upstream file the step touches too: it makes the dependency edge."""

    after: Path | None = None
    out: Path


class TouchOutputs(BaseModel):
    out: Path | None = None


touch = Cab(
    name="touch",
    command="/bin/touch",
    inputs_model=TouchInputs,
    outputs_model=TouchOutputs,
    field_meta={"after": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
)


def file_name(index: int) -> str:
    """The file step ``index`` touches, relative to the directory the run starts in."""
    return f"f{index:06d}"


def _step(index: int, after: int | None) -> StepRef:
    wiring: dict[str, Any] = {"out": Path(file_name(index))}
    if after is not None:
        wiring["after"] = OutputRef(step=f"s{after:06d}", field="out")
    return StepRef(name=f"s{index:06d}", step=touch, wiring=wiring)


def touch_recipe(steps: int) -> Recipe:
    """``steps`` independent touches: nothing orders them but the scheduler."""
    return Recipe(name=f"touch_{steps}", steps=[_step(i, None) for i in range(steps)])


def chain_recipe(steps: int) -> Recipe:
    """``steps`` touches where each waits for (and touches) the previous one's file."""
    return Recipe(
        name=f"chain_{steps}",
        steps=[_step(i, i - 1 if i else None) for i in range(steps)],
    )


def fanout_recipe(steps: int) -> Recipe:
    """One root, then ``steps - 1`` touches that all depend on the root's file."""
    return Recipe(
        name=f"fanout_{steps}",
        steps=[_step(i, 0 if i else None) for i in range(steps)],
    )


SHAPES = {"touch": touch_recipe, "chain": chain_recipe, "fanout": fanout_recipe}

#: The module-level recipes the suite names; any SHAPE_N also resolves.
TARGETS = (
    "touch_100",
    "touch_1000",
    "chain_10000",
    "chain_100000",
    "fanout_10000",
    "fanout_100000",
)

_NAME = re.compile(r"^(touch|chain|fanout)_([1-9][0-9]*)$")
_built: dict[str, Recipe] = {}


def __getattr__(name: str) -> Recipe:
    """``touch_1000`` and friends, built on first access."""
    match = _NAME.match(name)
    if match is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _built:
        shape, size = match.groups()
        _built[name] = SHAPES[shape](int(size))
    return _built[name]
