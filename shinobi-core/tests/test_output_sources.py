"""One output, one source: a cab whose output two sources give is refused when made.

With an ``implicit`` template (or a ``harvest`` glob) and an output wrangler
on one output, the dry run showed the template's path, the run used what the
wrangler matched, and the compiler called it unknown: three answers for one
edge. Any two of a passthrough, an implicit template, a harvest glob and an
output wrangler are now refused where the cab is made, naming both.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.steps import Cab, File, ParamMeta, Wrangler


class PrefixIn(BaseModel):
    prefix: str = "p"


class ImgOut(BaseModel):
    img: File | None = None


class PathIn(BaseModel):
    img: Path


WRANGLER = Wrangler(r"wrote (\S+)", "output", output="img")


def _cab(
    inputs: type[BaseModel] = PrefixIn,
    meta: ParamMeta | None = None,
    wranglers: tuple[Wrangler, ...] = (WRANGLER,),
) -> Cab:
    field_meta = {"img": meta} if meta is not None else {}
    return Cab("imager", "true", inputs, ImgOut, field_meta, wranglers=list(wranglers))


def test_a_template_and_a_wrangler_on_one_output_are_refused() -> None:
    with pytest.raises(ValueError) as caught:
        _cab(meta=ParamMeta(implicit="{prefix}-image.fits"))
    assert str(caught.value) == (
        "cab 'imager': output 'img' is given both by its implicit template"
        " '{prefix}-image.fits' and by the wrangler r'wrote (\\S+)', which may name different"
        " files; keep one of them (what a wrangler matches or a glob collects is known only"
        " after the tool ran)"
    )


def test_a_harvest_glob_and_a_wrangler_are_refused() -> None:
    with pytest.raises(ValueError, match=r"its harvest glob '\{prefix\}-\*\.fits' and by the"):
        _cab(meta=ParamMeta(harvest="{prefix}-*.fits"))


def test_a_template_and_a_harvest_glob_are_refused() -> None:
    with pytest.raises(
        ValueError, match=r"its implicit template 'a\.fits' and by its harvest glob"
    ):
        _cab(meta=ParamMeta(implicit="a.fits", harvest="*.fits"), wranglers=())


def test_a_passthrough_and_a_wrangler_are_refused() -> None:
    with pytest.raises(ValueError, match=r"the path input 'img' \(a passthrough\) and by the"):
        _cab(inputs=PathIn)


def test_one_source_each_is_taken() -> None:
    _cab()  # the wrangler alone
    _cab(meta=ParamMeta(implicit="{prefix}-image.fits"), wranglers=())
    _cab(meta=ParamMeta(harvest="{prefix}-*.fits"), wranglers=())
    _cab(inputs=PathIn, wranglers=())
    # a wrangler that only judges the output (an error, a warning) sets no output
    _cab(meta=ParamMeta(implicit="a.fits"), wranglers=(Wrangler(r"^SEVERE", "error"),))
