"""Audit 24: cab declarations that were silently misread, and the order an output
wrangler on both streams reads them in."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from shinobi.steps import Cab, File, ParamMeta
from shinobi.steps.argv import render_argv


class In(BaseModel):
    prefix: str
    verbose: bool = False


class Out(BaseModel):
    image: File | None = None


def test_a_field_meta_key_far_from_every_field_is_refused_naming_the_fields() -> None:
    """The audit's case: ``restored`` on a cab whose output is ``image`` was dropped,
    its implicit template with it, and the run reported ``image = None``."""
    with pytest.raises(ValueError) as caught:
        Cab("img", "img", In, Out, {"restored": ParamMeta(implicit="{prefix}-image.fits")})
    assert str(caught.value) == (
        "cab 'img': field_meta names 'restored', which is neither an input nor an output;"
        " its fields: image, prefix, verbose"
    )


def test_a_field_meta_key_near_a_field_still_gets_the_suggestion() -> None:
    with pytest.raises(ValueError, match=r"names 'imag', .*; did you mean 'image'\?$"):
        Cab("img", "img", In, Out, {"imag": ParamMeta(implicit="{prefix}-image.fits")})


def test_a_field_meta_key_on_a_cab_without_fields_says_it_has_none() -> None:
    with pytest.raises(ValueError, match=r"names 'nosuch', .*; it has no fields$"):
        Cab("tool", "tool", field_meta={"nosuch": ParamMeta(flag="-x")})


class Echo(BaseModel):
    text: str = "hello"
    verbose: bool = True


@pytest.mark.parametrize(
    "meta",
    [ParamMeta(positional=True), ParamMeta(positional=True, flag="-v")],
)
def test_a_positional_bool_is_refused(meta: ParamMeta) -> None:
    """It reached the tool as the word ``True``; a flag given beside positional was
    never used either."""
    with pytest.raises(ValueError) as caught:
        Cab("echo", "echo", Echo, field_meta={"text": ParamMeta(positional=True), "verbose": meta})
    said = str(caught.value)
    assert said.startswith("cab 'echo': input 'verbose' is a bool marked positional")
    assert "ParamMeta(flag=...)" in said and "str or Literal" in said and "\n" not in said


def test_a_bool_list_marked_positional_is_refused_too() -> None:
    class Flags(BaseModel):
        flags: list[bool] = []

    with pytest.raises(ValueError, match="input 'flags' is a bool marked positional"):
        Cab("t", "t", Flags, field_meta={"flags": ParamMeta(positional=True)})


def test_a_bool_that_is_a_flag_or_skipped_is_accepted() -> None:
    cab = Cab(
        "echo",
        "echo",
        Echo,
        field_meta={"text": ParamMeta(positional=True), "verbose": ParamMeta(flag="-v")},
    )
    assert render_argv(cab, {"text": "hello", "verbose": True}) == ["echo", "-v", "hello"]
    skipped = Cab(
        "echo", "echo", Echo, field_meta={"verbose": ParamMeta(positional=True, skip=True)}
    )
    assert render_argv(skipped, {"text": "hi", "verbose": True}) == ["echo", "--text", "hi"]
