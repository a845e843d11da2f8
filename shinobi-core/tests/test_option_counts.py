"""How often a recipe input's option may be given.

A single-valued input given twice (``--target a.ms --target b.ms``) kept the
last value without a word; a fixed-length tuple input (``tuple[int, int]``)
offered ``--no-pair`` in ``--help``, which was then refused, and given one
value said "input 'pair.1': Field required". Each is now refused with what the
option takes; a list input still takes any number of repeats.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from recipe_cli import pipe_runner

RECIPE = """
from pathlib import Path
from typing import Literal
from pydantic import BaseModel, Field
from shinobi.steps import Cab, Recipe

class In(BaseModel):
    target: Path = Path("t.ms")
    mode: Literal["fast", "slow"] = "fast"
    n_max: int = Field(1, alias="nMax")
    ms: list[str] = ["a.ms"]
    some: list[int] = Field([1], min_length=1)
    pair: tuple[int, int] = (1, 2)
    span: tuple[int, ...] = (1,)

tool = Cab("tool", ["true"], In)
pipe = Recipe("pipe", In)
pipe.add_step("tool", tool, target=pipe.inputs.target, mode=pipe.inputs.mode,
              n_max=pipe.inputs.n_max, ms=pipe.inputs.ms, some=pipe.inputs.some,
              pair=pipe.inputs.pair, span=pipe.inputs.span)
"""


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    return pipe_runner(tmp_path, monkeypatch, RECIPE)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--target", "first.ms", "--target", "second.ms"],
            "option --target takes one value, but was given 2 ('first.ms', 'second.ms');"
            " give it once",
        ),
        (["--target=a", "--target", "b"], "option --target takes one value, but was given 2"),
        (["--mode", "fast", "--mode", "slow"], "option --mode takes one value"),
        (["--n-max", "1", "--nMax", "2"], "option --n-max takes one value"),  # an alias too
        (
            ["--pair", "5"],
            "option --pair takes exactly 2 values, but was given 1 ('5');"
            " give it 2 times, once for each value",
        ),
        (["--pair", "5", "--pair", "6", "--pair", "7"], "but was given 3 ('5', '6', '7')"),
    ],
)
def test_a_wrong_count_of_values_is_refused(
    run: Callable[..., Result], args: list[str], said: str
) -> None:
    result = run(*args, "--dryrun")
    assert result.exit_code == 2
    assert said in " ".join(result.output.split())


def test_lists_and_right_counts_are_accepted(run: Callable[..., Result]) -> None:
    args = ["--ms", "x", "--ms", "y", "--span", "1", "--span", "2", "--span", "3"]
    result = run(*args, "--pair", "5", "--pair", "6", "--target", "t", "--no-ms", "--dryrun")
    assert "give --ms values or --no-ms, not both" in str(result.exception)  # still
    result = run(*args, "--pair", "5", "--pair", "6", "--target", "t", "--dryrun")
    assert result.exit_code == 0, result.output


def test_help_offers_no_empty_value_a_field_refuses(run: Callable[..., Result]) -> None:
    shown = " ".join(run("--help").output.split())
    assert "--no-pair" not in shown and "--no-some" not in shown
    assert "(exactly 2 values: repeat the option for each) [default: 1 2]" in shown
    assert "--no-ms for none" in shown  # a list that may be empty still has it
    assert run("--no-pair", "--dryrun").exit_code == 2  # no such option
