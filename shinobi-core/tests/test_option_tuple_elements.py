"""A fixed-length tuple input whose elements differ in type, on the command line.

``weight: tuple[Literal["briggs", "natural"], float]`` took its option's type
from its first element alone: ``--weight briggs --weight 0.5`` was refused as
"'0.5' is not one of 'briggs', 'natural'", so the input could not be given at
all, and ``--help`` showed the first element's type only. Each value is now
read as its own element, given as a homogeneous tuple's are (the option
repeated), and a wrong one is refused naming which.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from recipe_cli import pipe_runner

RECIPE = """
from typing import Literal
from pydantic import BaseModel
from shinobi.steps import Cab

class In(BaseModel):
    weight: tuple[Literal["briggs", "natural"], float] = ("briggs", 0.5)
    box: tuple[int, str] | None = None
    size: tuple[int, int] = (1, 2)

pipe = Cab("tool", ["true"], In)
"""


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    return pipe_runner(tmp_path, monkeypatch, RECIPE)


def _argv(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    (step,) = json.loads(result.output)["steps"]
    return list(step["argv"])


def test_each_value_is_read_as_its_own_element(run: Callable[..., Result]) -> None:
    argv = _argv(
        run(
            "--weight",
            "natural",
            "--weight",
            "0.25",
            "--box",
            "5",
            "--box",
            "y",
            "--dry-run",
            "--json",
        )
    )
    assert argv == [
        "true",
        *("--weight", "natural", "--weight", "0.25"),
        *("--box", "5", "--box", "y"),
        *("--size", "1", "--size", "2"),
    ]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--weight", "0.5", "--weight", "briggs"],
            "Invalid value for '--weight': value 1 of 2: '0.5' is not one of 'briggs', 'natural'",
        ),
        (["--box", "5", "--box", "6", "--weight", "briggs", "--weight", "x"], "value 2 of 2: 'x'"),
        (["--box", "y", "--box", "5"], "value 1 of 2: 'y' is not a valid integer"),
        (["--box", "5"], "option --box takes exactly 2 values, but was given 1 ('5')"),
    ],
)
def test_a_wrong_value_is_refused_naming_which(
    run: Callable[..., Result], args: list[str], said: str
) -> None:
    result = run(*args, "--dry-run")
    assert result.exit_code == 2
    assert said in " ".join(result.output.split())


def test_help_shows_each_element_as_it_is_given(run: Callable[..., Result]) -> None:
    shown = " ".join(run("--help").output.split())
    assert "--weight [briggs|natural] --weight FLOAT" in shown
    assert "--box INTEGER --box TEXT" in shown
    assert "--size INTEGER (exactly 2 values" in shown  # a homogeneous tuple, as before
