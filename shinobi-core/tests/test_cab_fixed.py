"""A cab is fixed once made: its command-line layout, path fields and output rules
are worked out once and kept, so a later change would reach some steps and not
others, unchecked. It is refused instead; copies stay usable and fixed."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.steps import Cab, File, ParamMeta
from shinobi.steps.argv import path_uses, render_argv
from shinobi.steps.outputs import static_outputs


class In(BaseModel):
    src: File
    n: int = 3


class Out(BaseModel):
    img: File | None = None


def _cab() -> Cab:
    return Cab("tool", "tool", In, Out, {"img": ParamMeta(implicit="{src.stem}.fits")})


VALUES = {"src": Path("a.txt"), "n": 3}


@pytest.mark.parametrize("attribute", ["flag_prefix", "field_meta", "image", "inputs_model"])
def test_an_attribute_of_a_made_cab_cannot_be_set(attribute: str) -> None:
    cab = _cab()
    render_argv(cab, VALUES)  # its layout is now kept
    with pytest.raises(AttributeError, match=f"cab 'tool': {attribute} cannot be changed"):
        setattr(cab, attribute, "-")
    assert render_argv(cab, VALUES) == ["tool", "--src", "a.txt", "--n", "3"]


def test_its_field_meta_cannot_be_changed_in_place() -> None:
    cab = _cab()
    with pytest.raises(TypeError):
        cab.field_meta["src"] = ParamMeta(positional=True)  # type: ignore[index]
    assert static_outputs(cab, "s", VALUES) == {"img": "a.fits"}


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy])
def test_a_copy_says_the_same_and_is_fixed_too(copier: object) -> None:
    cab = _cab()
    render_argv(cab, VALUES)
    twin = copier(cab)  # type: ignore[operator]
    assert render_argv(twin, VALUES) == render_argv(cab, VALUES)
    assert path_uses(twin, VALUES, {}, "/w") == path_uses(cab, VALUES, {}, "/w")
    assert twin.field_meta["img"].implicit == "{src.stem}.fits"
    with pytest.raises(AttributeError):
        twin.flag_prefix = "-"
    with pytest.raises(TypeError):
        twin.field_meta["n"] = ParamMeta()
