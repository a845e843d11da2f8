"""Declarative wiring with the input/output proxies: image a measurement set, then mask it.

    ninja run examples/proxy_demo.py:demo                  # observe, then the selfcal recipe
    ninja run examples/proxy_demo.py:selfcal --ms demo.ms  # the MS demo made; any MS works

``selfcal`` is the two-step recipe of the recipes guide: ``image`` (a
wsclean-like imager writing ``PREFIX-image.fits``) and ``mask`` (a
breizorro-like masker writing ``IMAGE.mask.fits``). Passing
``selfcal.outputs.image.restored`` as the mask step's input is the edge
between them; ``set_output`` makes the mask the recipe's own output.
``demo`` uses ``selfcal`` as one step of a larger recipe, after making an
MS to image. The tools are small Python scripts in ``examples/tools`` that
read and write real FITS files.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from shinobi import Recipe
from shinobi.loaders import build_model
from shinobi.steps import MS, Cab, File, ParamMeta

TOOLS = Path(__file__).resolve().parent / "tools"


class WscleanIn(BaseModel):
    ms: MS
    prefix: str


class WscleanOut(BaseModel):
    restored: File


class BreizorroIn(BaseModel):
    restored_image: File
    sigma: float = 5.0


class BreizorroOut(BaseModel):
    mask: File


wsclean = Cab(
    "wsclean",
    [str(TOOLS / "image.py")],
    WscleanIn,
    WscleanOut,
    {
        "ms": ParamMeta(positional=True, writable=False),
        "prefix": ParamMeta(flag="-name"),
        "restored": ParamMeta(implicit="{prefix}-image.fits"),
    },
)
breizorro = Cab(
    "breizorro",
    [str(TOOLS / "mask.py")],
    BreizorroIn,
    BreizorroOut,
    {
        "restored_image": ParamMeta(flag="--restored-image", writable=False),
        "mask": ParamMeta(implicit="{restored_image}.mask.fits"),
    },
)


class ImageInputs(BaseModel):
    ms: MS = Field(description="the measurement set to image")
    prefix: str = Field("selfcal", description="image name prefix")


selfcal = Recipe(
    name="selfcal",
    inputs_model=ImageInputs,
    outputs_model=build_model("Out", {"mask": ("File", False, None)}),
)
selfcal.add_step("image", wsclean, ms=selfcal.inputs.ms, prefix=selfcal.inputs.prefix)
selfcal.add_step("mask", breizorro, restored_image=selfcal.outputs.image.restored)
selfcal.set_output("mask", selfcal.outputs.mask.mask)


# -- the same recipe as one step of a larger one ------------------------------------


class ObserveIn(BaseModel):
    ms: MS


class ObserveOut(BaseModel):
    ms: MS


observe = Cab(
    "observe",
    [str(TOOLS / "observe.py")],
    ObserveIn,
    ObserveOut,
    {"ms": ParamMeta(positional=True)},
)


class DemoInputs(BaseModel):
    ms: MS = Field(Path("demo.ms"), description="where to make the measurement set")
    prefix: str = Field("demo", description="image name prefix")


demo = Recipe("demo", DemoInputs, build_model("DemoOut", {"mask": ("File", False, None)}))
demo.add_step("observe", observe, ms=demo.inputs.ms)
demo.add_step("selfcal", selfcal, ms=demo.outputs.observe.ms, prefix=demo.inputs.prefix)
demo.set_output("mask", demo.outputs.selfcal.mask)
