"""Self-calibration as a loop: calibrate -> image -> assess until the image is good enough.

    ninja run examples/selfcal_loop.py:selfcal --ms obs.ms --dryrun
    ninja run examples/selfcal_loop.py:selfcal --ms obs.ms
    cat selfcal.log            # what actually ran: 3 cycles, not 10

``observe`` makes a fresh measurement set; the ``selfcal`` loop then runs at
most 10 cycles of the ``cycle`` body. Each calibration removes three
quarters of the gain error, the imager's noise follows it, and ``assess``
writes ``PREFIX.converged`` once the noise is at or below ``--threshold``:
with the defaults that is cycle 3. Cycles 4-10 are recorded as skipped and
run nothing; ``publish`` copies the final image, which ``loop.outputs``
names.

Everything that crosses between steps is a path known before the run (the
MS rewritten in place, the image and the flag with one name for every
cycle), so ``ninja compile`` can turn the loop into a chain of cluster jobs
guarded by the same flag file.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from shinobi.steps import MS, Cab, File, ParamMeta, Recipe

TOOLS = Path(__file__).resolve().parent / "tools"


class CalibrateIn(BaseModel):
    ms: MS
    cycle: int = 0
    log: File | None = None


class CalibrateOut(BaseModel):
    ms: MS


class ImageIn(BaseModel):
    ms: MS
    prefix: str
    cycle: int = 0
    log: File | None = None


class ImageOut(BaseModel):
    image: File


class AssessIn(BaseModel):
    image: File
    prefix: str
    threshold: float
    cycle: int = 0
    log: File | None = None


class AssessOut(BaseModel):
    # Optional: the flag exists only once converged, and its existence is the test.
    converged: File | None = None


class PublishIn(BaseModel):
    image: File
    to: File
    log: File | None = None


class PublishOut(BaseModel):
    to: File


# Every tool appends to the log it is given, so the log shows what really ran.
_LOG = {"log": ParamMeta(mutable=True)}

calibrate = Cab(
    "calibrate",
    [str(TOOLS / "calibrate.py")],
    CalibrateIn,
    CalibrateOut,
    {"ms": ParamMeta(positional=True, mutable=True), **_LOG},
)
image = Cab(
    "image",
    [str(TOOLS / "image.py")],
    ImageIn,
    ImageOut,
    {
        "ms": ParamMeta(positional=True, writable=False),
        "prefix": ParamMeta(flag="-name"),
        "image": ParamMeta(implicit="{prefix}-image.fits"),
        **_LOG,
    },
)
assess = Cab(
    "assess",
    [str(TOOLS / "assess.py")],
    AssessIn,
    AssessOut,
    {
        "image": ParamMeta(positional=True, writable=False),
        "converged": ParamMeta(implicit="{prefix}.converged"),
        **_LOG,
    },
)
observe = Cab(
    "observe",
    [str(TOOLS / "observe.py")],
    CalibrateIn,
    CalibrateOut,
    {"ms": ParamMeta(positional=True), "cycle": ParamMeta(skip=True), **_LOG},
)
publish = Cab(
    "publish",
    [str(TOOLS / "publish.py")],
    PublishIn,
    PublishOut,
    {"image": ParamMeta(positional=True, writable=False), **_LOG},
)


# -- one cycle: the loop body ---------------------------------------------------


class CycleIn(BaseModel):
    ms: MS
    cycle: int = 1
    prefix: str = "selfcal"
    threshold: float = 3.0
    log: File | None = None


class CycleOut(BaseModel):
    ms: MS
    image: File
    converged: File | None = None


cycle = Recipe("cycle", CycleIn, CycleOut)
cycle.add_step(
    "calibrate", calibrate, ms=cycle.inputs.ms, cycle=cycle.inputs.cycle, log=cycle.inputs.log
)
cycle.add_step(
    "image",
    image,
    ms=cycle.outputs.calibrate.ms,
    prefix=cycle.inputs.prefix,
    cycle=cycle.inputs.cycle,
    log=cycle.inputs.log,
)
cycle.add_step(
    "assess",
    assess,
    image=cycle.outputs.image.image,
    prefix=cycle.inputs.prefix,
    threshold=cycle.inputs.threshold,
    cycle=cycle.inputs.cycle,
    log=cycle.inputs.log,
)
cycle.set_output("ms", cycle.outputs.calibrate.ms)
cycle.set_output("image", cycle.outputs.image.image)
cycle.set_output("converged", cycle.outputs.assess.converged)


# -- the pipeline ----------------------------------------------------------------


class SelfcalIn(BaseModel):
    ms: MS = Field(Path("obs.ms"), description="the measurement set to (re)create and calibrate")
    prefix: str = Field("selfcal", description="image names: PREFIX-image.fits, PREFIX.converged")
    threshold: float = Field(3.0, description="converged once the image noise is at or below this")
    final: File = Field(Path("final-image.fits"), description="where the final image is published")
    log: File = Field(Path("selfcal.log"), description="every tool appends what it did here")


class SelfcalOut(BaseModel):
    image: File
    converged: File | None = None
    final: File


selfcal = Recipe("selfcal", SelfcalIn, SelfcalOut)
selfcal.add_step("observe", observe, ms=selfcal.inputs.ms, log=selfcal.inputs.log)
loop = selfcal.add_loop(
    "selfcal",
    cycle,
    max_iter=10,
    until="converged",
    carry={"ms": "ms"},
    index_input="cycle",
    ms=selfcal.outputs.observe.ms,
    prefix=selfcal.inputs.prefix,
    threshold=selfcal.inputs.threshold,
    log=selfcal.inputs.log,
)
selfcal.add_step(
    "publish", publish, image=loop.outputs.image, to=selfcal.inputs.final, log=selfcal.inputs.log
)
selfcal.set_output("image", loop.outputs.image)
selfcal.set_output("converged", loop.outputs.converged)
selfcal.set_output("final", selfcal.outputs.publish.to)
