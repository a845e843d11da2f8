"""A failed step's error is one line, whatever its own Python raised.

An orchestration function's exception was reported with its whole message, so
a multi-line message broke the one-line error across lines; an exception with
no message (a bare ``raise KeyboardInterrupt``) ended the error with ``": "``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import shinobi
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class EchoIn(BaseModel):
    msg: str = "hi"


class Nothing(BaseModel):
    pass


echo = Cab("echo", ["echo"], EchoIn, Nothing, {"msg": ParamMeta(positional=True)})


@shinobi.step(echo)
def two_lines(ctx: Any) -> Any:
    ctx.run()
    raise ValueError("the fit diverged\nchi2 = 1e9 at iteration 40")


@shinobi.step(echo)
def bare(ctx: Any) -> Any:
    raise KeyboardInterrupt


@shinobi.pystep
def bare_pystep() -> None:
    raise RuntimeError


def _run(tmp_path: Path, step: Any) -> Any:
    recipe = Recipe("r", Nothing, Nothing)
    recipe.add_step("s", step)
    return run_recipe(recipe, cwd=tmp_path, use_cache=False).steps[0]


def test_a_multi_line_message_is_one_line_and_whole_in_the_stderr(tmp_path: Path) -> None:
    result = _run(tmp_path, two_lines)
    assert result.status == "failed"
    assert result.error == (
        "the orchestration function raised ValueError: the fit diverged"
        " (traceback in the step's stderr)"
    )
    assert "chi2 = 1e9 at iteration 40" in result.stderr
    logs = list(tmp_path.rglob("logs/s.err"))
    assert logs, "no stderr log for the step"
    assert "chi2 = 1e9 at iteration 40" in logs[0].read_text()
    assert "hi" in next(tmp_path.rglob("logs/s.out")).read_text()  # ctx.run()'s output kept


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (
            bare,
            "the orchestration function raised KeyboardInterrupt (traceback in the step's stderr)",
        ),
        (bare_pystep, "RuntimeError (traceback in the step's stderr)"),
    ],
)
def test_an_exception_without_a_message_names_its_type_only(
    tmp_path: Path, step: Any, expected: str
) -> None:
    result = _run(tmp_path, step)
    assert result.status == "failed"
    assert result.error == expected


@shinobi.pystep
def numbers() -> list:  # type: ignore[type-arg]
    return [1, "many", 3]


@shinobi.pystep
def square(x: int) -> int:
    return x * x


def test_a_slice_refused_at_run_time_is_named_as_the_static_check_names_it(
    tmp_path: Path,
) -> None:
    recipe = Recipe("r", Nothing, Nothing)
    recipe.add_step("count", numbers)
    recipe.add_step("square", square, scatter=["x"], x=recipe.outputs.count.result)
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.failed_step == "square"
    assert result.error is not None
    assert result.error.startswith("step 'square[1]': input 'x': Input should be a valid integer")
