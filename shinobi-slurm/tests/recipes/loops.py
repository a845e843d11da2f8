"""Loop recipes for the tests: a self-calibration loop that converges at iteration 3.

``calibrate`` rewrites the MS in place (a line in its HISTORY), ``image``
reads it, ``assess`` writes the convergence flag once the MS has been
calibrated three times. Every path is the same in every iteration, as an
offloadable loop needs; ``per_cycle`` breaks that rule on purpose.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.steps import MS, Cab, InputRef, OutputRef, ParamMeta, Recipe, StepRef

CALIBRATE = 'mkdir -p "$1" && echo "calibrate $(date +%s.%N)" >> "$1/HISTORY"'
IMAGE = 'cat "$1/HISTORY" > "$2"'
ASSESS = 'n=$(grep -c calibrate "$1/HISTORY"); if [ "$n" -ge 3 ]; then : > "$2"; fi'


class LoopInputs(BaseModel):
    ms: MS
    flag: Path


class Outs(BaseModel):
    converged: Path | None = None


class MsIn(BaseModel):
    ms: MS


class MsOut(BaseModel):
    ms: MS | None = None


class ImageIn(BaseModel):
    ms: MS
    image: Path


class ImageOut(BaseModel):
    image: Path | None = None


class AssessIn(BaseModel):
    ms: MS
    flag: Path


class AssessOut(BaseModel):
    flag: Path | None = None


calibrate = Cab(
    name="calibrate",
    command=["/bin/sh", "-c", CALIBRATE, "calibrate"],
    inputs_model=MsIn,
    outputs_model=MsOut,
    field_meta={"ms": ParamMeta(positional=True, mutable=True)},
)
image = Cab(
    name="image",
    command=["/bin/sh", "-c", IMAGE, "image"],
    inputs_model=ImageIn,
    outputs_model=ImageOut,
    field_meta={"ms": ParamMeta(positional=True), "image": ParamMeta(positional=True)},
)
assess = Cab(
    name="assess",
    command=["/bin/sh", "-c", ASSESS, "assess"],
    inputs_model=AssessIn,
    outputs_model=AssessOut,
    field_meta={"ms": ParamMeta(positional=True), "flag": ParamMeta(positional=True)},
)

body = Recipe(
    name="round",
    inputs_model=LoopInputs,
    outputs_model=Outs,
    steps=[
        StepRef("calibrate", calibrate, {"ms": InputRef("ms")}),
        StepRef("image", image, {"ms": OutputRef("calibrate", "ms"), "image": Path("image.txt")}),
        StepRef("assess", assess, {"ms": OutputRef("calibrate", "ms"), "flag": InputRef("flag")}),
    ],
    output_wiring={"converged": OutputRef("assess", "flag")},
)

selfcal = Recipe(name="selfcal", inputs_model=LoopInputs, outputs_model=Outs)
loop = selfcal.add_loop(
    "cal", body, max_iter=5, until="converged", ms=selfcal.inputs.ms, flag=selfcal.inputs.flag
)
selfcal.set_output("converged", loop.outputs.converged)

#: The same loop given too few iterations to converge (``assess`` wants three).
short = Recipe(name="short", inputs_model=LoopInputs, outputs_model=Outs)
short_loop = short.add_loop(
    "cal", body, max_iter=2, until="converged", ms=short.inputs.ms, flag=short.inputs.flag
)
short.set_output("converged", short_loop.outputs.converged)
