"""A path whose name starts with ``-`` reaches the tool as ``./-v``, never as an option."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shinobi.steps import MS, Cab, File, ParamMeta
from shinobi.steps.argv import path_uses, render_argv


class In(BaseModel):
    src: File
    out: File
    ms: MS | None = None
    extra: list[File] = []
    label: str | None = None
    offset: int | None = None
    typed: str | None = None


class Out(BaseModel):
    out: File


def cab(**meta: ParamMeta) -> Cab:
    positional = {"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)}
    return Cab("cp", "cp", In, Out, {**positional, **meta})


def test_a_positional_path_starting_with_a_dash_is_given_as_dot_slash() -> None:
    assert render_argv(cab(), {"src": "-v", "out": Path("-made.txt")}) == [
        "cp",
        "./-v",
        "./-made.txt",
    ]


def test_an_option_value_and_each_list_element_get_it_too() -> None:
    argv = render_argv(
        cab(ms=ParamMeta(style="equals")),
        {"src": "a", "out": "b", "ms": "-x.ms", "extra": ["-e", "f"]},
    )
    assert argv == ["cp", "--ms=./-x.ms", "--extra", "./-e", "--extra", "f", "a", "b"]


def test_a_field_declared_a_path_by_dtype_gets_it() -> None:
    argv = render_argv(cab(typed=ParamMeta(dtype="File")), {"src": "a", "out": "b", "typed": "-t"})
    assert argv == ["cp", "--typed", "./-t", "a", "b"]


def test_text_numbers_and_absolute_paths_stay_as_given() -> None:
    argv = render_argv(
        cab(), {"src": "/abs/-v", "out": "b", "label": "-l", "offset": -3, "ms": "./-m"}
    )
    assert argv == ["cp", "--ms", "./-m", "--label", "-l", "--offset", "-3", "/abs/-v", "b"]


def test_the_shown_argv_also_has_it_and_the_step_paths_are_unchanged() -> None:
    values = {"src": "-v", "out": "o"}
    assert render_argv(cab(), values) == render_argv(cab(), values, reveal=True)
    assert [use.path for use in path_uses(cab(), values, {"out": "o"}, "/w")] == ["/w/-v", "/w/o"]


def test_a_file_called_dash_v_is_copied_not_read_as_an_option(
    tmp_path: Path, ninja: Callable[..., Any], recipe_file: Callable[[str], Path]
) -> None:
    """cp got ``cp -v copy.txt`` and failed with a missing operand."""
    (tmp_path / "-v").write_text("data\n")
    recipe_file(
        """
        from pydantic import BaseModel
        from shinobi import Recipe
        from shinobi.steps import Cab, File, ParamMeta
        class TIn(BaseModel):
            src: File
            out: File
        class TOut(BaseModel):
            out: File
        meta = {"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)}
        cp = Cab(name="cp", command="cp", inputs_model=TIn, outputs_model=TOut, field_meta=meta)
        r = Recipe("copy", TIn, TOut)
        r.add_step("c", cp, src=r.inputs.src, out=r.inputs.out)
        r.set_output("out", r.outputs.c.out)
        """
    )
    done = ninja("run", "recipe.py:r", "--src=-v", "--out=-copy.txt")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "-copy.txt").read_text() == "data\n"
