"""``{d[k]}`` whose mapping input ``d`` has no key ``k`` says that key is missing.

The KeyError of the missing key was taken for a missing input, so the
refusal said input 'k' has no value, naming an input nobody declared.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.errors import UsageError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe
from shinobi.steps.argv import format_template


def test_a_missing_key_is_said_of_its_mapping() -> None:
    with pytest.raises(ValueError) as caught:
        format_template("{d[k]}.txt", {"d": {"a": "x", "b": "y"}})
    assert str(caught.value) == (
        "cannot fill template '{d[k]}.txt': input 'd' has no key 'k' (its keys: 'a', 'b')"
    )


def test_a_key_missing_deeper_is_said_without_the_top_keys() -> None:
    with pytest.raises(ValueError) as caught:
        format_template("{d[a][z]}", {"d": {"a": {"b": "x"}}})
    assert str(caught.value) == "cannot fill template '{d[a][z]}': input 'd' has no key 'z'"


def test_a_missing_input_is_still_said_as_one() -> None:
    with pytest.raises(ValueError, match="input 'd' has no value"):
        format_template("{d[k]}", {})


def test_a_present_key_fills() -> None:
    assert format_template("{d[k]}.txt", {"d": {"k": "x"}}) == "x.txt"


class In(BaseModel):
    d: dict[str, str] = {"a": "x"}


class Out(BaseModel):
    out: File | None = None


def test_the_run_refuses_the_step_naming_the_key(tmp_path: Path) -> None:
    cab = Cab(
        "c",
        ["true"],
        In,
        Out,
        {"d": ParamMeta(skip=True), "out": ParamMeta(implicit="{d[k]}.txt")},
    )
    pipe = Recipe("pipe", In, Out)
    pipe.add_step("s", cab, d=pipe.inputs.d)
    with pytest.raises(UsageError) as caught:
        run_recipe(pipe, cwd=tmp_path, use_cache=False)
    assert str(caught.value).endswith(
        "cannot fill template '{d[k]}.txt': input 'd' has no key 'k' (its keys: 'a')"
    )
