"""A list of bools as an option sent the words ``True``/``False`` to the tool
(``--v True --v False``), which no tool reads: refused when the cab is made, as
a positional bool is; ``skip`` keeps it for templates."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pydantic import BaseModel

from shinobi.steps import Cab, ParamMeta
from shinobi.steps.argv import render_argv


class Lists(BaseModel):
    v: list[bool] = []
    t: tuple[bool, ...] = ()
    s: Sequence[bool] | None = None


@pytest.mark.parametrize("field", ["v", "t", "s"])
@pytest.mark.parametrize("style", ["repeat", "spread", "comma"])
def test_a_bool_list_option_is_refused_when_the_cab_is_made(field: str, style: str) -> None:
    skip = {f: ParamMeta(skip=True) for f in ("v", "t", "s") if f != field}
    meta = {**skip, field: ParamMeta(list_style=style)}  # type: ignore[arg-type]
    with pytest.raises(ValueError) as caught:
        Cab("c", ["echo"], Lists, field_meta=meta)
    said = str(caught.value)
    assert said == (
        f"cab 'c': input {field!r} is a list of bools, so each True would reach the tool as"
        " the word 'True' (a bool is a flag, present or absent); type it a list of str or"
        " Literal with the words the tool reads, or mark it ParamMeta(skip=True) to use it"
        " only in templates"
    )


def test_a_skipped_bool_list_is_accepted() -> None:
    meta = {f: ParamMeta(skip=True) for f in ("v", "t", "s")}
    cab = Cab("c", ["echo"], Lists, field_meta=meta)
    assert render_argv(cab, {"v": [True, False]}) == ["echo"]
