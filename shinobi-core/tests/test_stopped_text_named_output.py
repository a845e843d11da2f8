"""A stopped step's product named like one of its text inputs is set aside.

Only a path input makes a same-name output a passthrough (the user's path,
left in place when the step is stopped). The interrupt's clean-up took
every input's name for one, so the half-written ``deep.fits`` an implicit
output ``{image}.fits`` of a plain ``image: str`` input named stayed under
its final name.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel

from shinobi.backends.base import PathUse
from shinobi.interrupted_outputs import set_aside
from shinobi.steps import MS, Cab, File, ParamMeta


class TextIn(BaseModel):
    image: str = "deep"


class PathIn(BaseModel):
    ms: MS


class ImageOut(BaseModel):
    image: File | None = None


class MsOut(BaseModel):
    ms: MS | None = None


def named() -> Cab:
    """Its image is named after a text input: no passthrough."""
    return Cab(
        name="mk",
        command=["true"],
        inputs_model=TextIn,
        outputs_model=ImageOut,
        field_meta={"image": ParamMeta(implicit="{image}.fits")},
    )


def test_only_path_inputs_make_passthroughs() -> None:
    handed = Cab(name="cal", command=["true"], inputs_model=PathIn, outputs_model=MsOut)
    assert named().passthroughs() == frozenset()
    assert handed.passthroughs() == frozenset({"ms"})


def test_a_product_named_like_a_text_input_is_set_aside(tmp_path: Path) -> None:
    started = time.time() - 1
    product = tmp_path / "deep.fits"
    product.write_text("half")
    uses = [PathUse(str(product), "output", "image", "file")]
    asides = set_aside(uses, named().passthroughs(), {}, started)
    assert not product.exists(), [a.warning() for a in asides]
    assert (tmp_path / "deep.fits.interrupted").exists()
