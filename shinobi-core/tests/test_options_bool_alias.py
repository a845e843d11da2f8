"""A bool input with a pydantic alias takes its option by alias, as every other type does.

An ``int`` with ``Field(alias="nMax")`` was ``--n-max, --n_max, --nMax``, but a
bool with an alias was ``--dry-flag/--no-dry-flag`` alone: ``--dryFlag`` (the
spelling running.md promises) was refused as "No such option". Each of a bool's
names (its dashed name, its alias) is now a flag with its ``--no-`` form, given
once between them all.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from recipe_cli import pipe_runner

RECIPE = """
from pydantic import AliasChoices, BaseModel, Field
from shinobi.steps import Cab, Recipe

class In(BaseModel):
    n_max: int = Field(1, alias="nMax")
    dry_flag: bool = Field(False, alias="dryFlag")
    loud: bool = Field(True, validation_alias=AliasChoices("beLoud", "noisy"))
    keep: bool = Field(False, alias="cache")

class ToolIn(BaseModel):
    n_max: int = 1
    dry_flag: bool = False
    loud: bool = True
    keep: bool = False

tool = Cab("tool", ["echo"], ToolIn)
pipe = Recipe("pipe", In)
pipe.add_step("tool", tool, n_max=pipe.inputs.n_max, dry_flag=pipe.inputs.dry_flag,
              loud=pipe.inputs.loud, keep=pipe.inputs.keep)
"""


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    return pipe_runner(tmp_path, monkeypatch, RECIPE)


def _line(result: Result) -> str:
    """The dry run's command line for the step."""
    assert result.exit_code == 0, result.output
    return next(line for line in result.output.splitlines() if "$ echo" in line)


@pytest.mark.parametrize(
    ("args", "on", "off"),
    [
        (["--dryFlag"], ["--dry_flag"], []),
        (["--no-dryFlag"], [], ["--dry_flag"]),
        (["--beLoud"], ["--loud"], []),
        (["--no-beLoud"], [], ["--loud"]),  # AliasChoices: its first name
        (["--input-cache"], ["--keep"], []),  # an alias that is ninja's --no-cache's
        (["--no-input-cache"], [], ["--keep"]),
    ],
)
def test_a_bool_s_alias_is_an_option_with_its_no_form(
    run: Callable[..., Result], args: list[str], on: list[str], off: list[str]
) -> None:
    line = _line(run(*args, "--dryrun"))
    assert all(flag in line.split() for flag in on), line
    assert not any(flag in line.split() for flag in off), line


def test_ninja_s_own_no_cache_stays_ninja_s(run: Callable[..., Result]) -> None:
    assert "--keep" not in _line(run("--no-cache", "--dryrun")).split()


def test_a_bool_given_by_name_and_by_alias_is_given_twice(run: Callable[..., Result]) -> None:
    result = run("--dry-flag", "--no-dryFlag", "--dryrun")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert (
        "option --dry-flag/--no-dry-flag may be given once, but was given 2 times"
        " (--dry-flag, --no-dryFlag); give it once"
    ) in said


def test_help_lists_a_bool_s_alias_as_it_lists_an_int_s(run: Callable[..., Result]) -> None:
    shown = run("--help").output
    assert "--n-max, --n_max, --nMax" in shown
    assert (
        "--dry-flag, --dry_flag, --dryFlag / --no-dry-flag, --no-dry_flag, --no-dryFlag"
        in " ".join(shown.split())
    )
    assert "--loud, --beLoud / --no-loud, --no-beLoud" in shown
    assert "--keep, --input-cache / --no-keep, --no-input-cache" in shown
