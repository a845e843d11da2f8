"""Scatter: observe and image four fields at once, then gather the images into a mosaic.

    ninja run examples/scatter_demo.py:fields --dryrun
    ninja run examples/scatter_demo.py:fields
    cat mosaic.json            # each image's "started"/"finished", and "overlapped": true

``observe`` and ``image`` are scattered: one slice per field, named
``observe[0]`` ... ``image[3]``, up to four at a time (``max_workers=4``).
``image`` scatters over two lists at once (the MS and its image name, zipped
by position) and over ``observe``'s gathered output; ``mosaic`` takes the
gathered list of images whole. The imager stamps each FITS header with when
it started and finished, so the overlap is the tools' own record.

Each imaging slice declares the memory it needs (256MiB). Give the run a
smaller budget and the slices queue for their share instead of all starting
at once, in order (``--no-cache``, because otherwise every step of this
second run is served from the step cache and nothing runs):

    SHINOBI_EXECUTION_MEMORY=512MiB ninja run examples/scatter_demo.py:fields --no-cache

(two at a time; "overlapped" is then false).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from shinobi.resources import Resources
from shinobi.steps import MS, Cab, File, ParamMeta, Recipe

TOOLS = Path(__file__).resolve().parent / "tools"


class ObserveIn(BaseModel):
    ms: MS


class ObserveOut(BaseModel):
    ms: MS


class ImageIn(BaseModel):
    ms: MS
    prefix: str
    seconds: float = 0.0


class ImageOut(BaseModel):
    image: File


class MosaicIn(BaseModel):
    images: list[File]
    out: File


class MosaicOut(BaseModel):
    out: File


observe = Cab(
    "observe",
    [str(TOOLS / "observe.py")],
    ObserveIn,
    ObserveOut,
    {"ms": ParamMeta(positional=True)},
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
    },
    resources=Resources(memory="256MiB"),
)
mosaic = Cab(
    "mosaic",
    [str(TOOLS / "mosaic.py")],
    MosaicIn,
    MosaicOut,
    {"images": ParamMeta(positional=True, writable=False)},
)


class FieldsIn(BaseModel):
    mss: list[MS] = Field(
        [Path(f"field{k}.ms") for k in range(4)], description="one measurement set per field"
    )
    names: list[str] = Field(
        [f"field{k}" for k in range(4)], description="image name per field (same order)"
    )
    seconds: float = Field(1.0, description="how long each imaging slice works")
    mosaic: File = Field(Path("mosaic.json"), description="the gathered summary")


class FieldsOut(BaseModel):
    images: list[File]
    mosaic: File


fields = Recipe("fields", FieldsIn, FieldsOut, max_workers=4)
fields.add_step("observe", observe, scatter=["ms"], ms=fields.inputs.mss)
fields.add_step(
    "image",
    image,
    scatter=["ms", "prefix"],
    ms=fields.outputs.observe.ms,
    prefix=fields.inputs.names,
    seconds=fields.inputs.seconds,
)
fields.add_step("mosaic", mosaic, images=fields.outputs.image.image, out=fields.inputs.mosaic)
fields.set_output("images", fields.outputs.image.image)
fields.set_output("mosaic", fields.outputs.mosaic.out)
