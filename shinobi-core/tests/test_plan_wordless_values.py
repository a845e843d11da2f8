"""A mapping or a model given to a cab input typed ``Any`` or a union is refused.

A field declared a mapping is refused where the cab is made; one typed
``Any`` or ``int | dict[str, int]`` let a dict through to the command line as
Python's repr (``--a {'x': 1}``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi.errors import UsageError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class In(BaseModel):
    d: int | dict[str, int] = 1
    a: Any = None
    n: str = ""


class Out(BaseModel):
    pass


class NoteOut(BaseModel):
    n: str = "x"


def _refusal(recipe: str, name: str, what: str = "a mapping") -> str:
    return (
        f"recipe {recipe!r}, step 's': input {name!r} is given {what}, which has no command-line"
        " form (the tool would get Python's repr of it); give each of its values an input of"
        " its own, or mark the input ParamMeta(skip=True) to use it only in templates"
    )


def _pipe(skip: bool = False) -> Recipe:
    meta = {"d": ParamMeta(skip=True), "a": ParamMeta(skip=True)} if skip else {}
    cab = Cab("c", ["true"], In, Out, meta)
    pipe = Recipe("pipe", In, Out)
    pipe.add_step("s", cab, d=pipe.inputs.d, a=pipe.inputs.a)
    return pipe


def test_a_dict_to_a_union_input_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        run_recipe(_pipe(), {"d": {"x": 1}}, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == _refusal("pipe", "d")
    assert not (tmp_path / ".shinobi").exists()


def test_a_model_in_a_list_to_an_any_input_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        run_recipe(_pipe(), {"a": ["w", NoteOut()]}, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == _refusal("pipe", "a", "a model")


def test_a_dict_literal_beside_a_run_time_value_is_refused(tmp_path: Path) -> None:
    note = Cab("note", ["true"], Out, NoteOut)
    cab = Cab("c", ["true"], In, Out)
    pipe = Recipe("late", In, Out)
    pipe.add_step("n", note)
    pipe.add_step("s", cab, a={"x": 1}, n=pipe.outputs.n.n)
    with pytest.raises(UsageError) as caught:
        run_recipe(pipe, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == _refusal("late", "a")


def test_a_skipped_input_or_a_plain_value_is_taken(tmp_path: Path) -> None:
    assert run_recipe(_pipe(skip=True), {"d": {"x": 1}}, cwd=tmp_path, use_cache=False).ok
    assert run_recipe(_pipe(), {"d": 3, "a": ["w", 2]}, cwd=tmp_path, use_cache=False).ok


def test_a_dict_an_earlier_step_returns_fails_the_step_before_its_tool_starts(
    tmp_path: Path,
) -> None:
    import shinobi

    @shinobi.pystep()
    def make() -> Any:
        return {"x": 1}

    marker = tmp_path / "ran"
    cab = Cab("c", ["touch", str(marker)], In, Out, {"n": ParamMeta(skip=True)})
    pipe = Recipe("pipe", In, Out)
    pipe.add_step("m", make)
    pipe.add_step("s", cab, a=pipe.outputs.m.result)
    result = run_recipe(pipe, cwd=tmp_path, use_cache=False)
    assert not result.ok
    assert result.error is not None and "input 'a' is given a mapping" in result.error
    assert not marker.exists()
