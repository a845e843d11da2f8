"""A bool input's ``--flag/--no-flag`` is given once, as every single-valued input is.

A repeated single-valued option was refused (``--mode a --mode b``), but
``--flag --no-flag`` still kept the last without a word, though running.md says
any input given twice is refused. ninja's own flags (``--no-cache``) and a
list's ``--no-NAME`` are not inputs' values, and keep their ways.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from recipe_cli import pipe_runner

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe

class In(BaseModel):
    flag: bool = False
    loud: bool = True
    cache: bool = False
    ms: list[str] = ["a.ms"]

tool = Cab("tool", ["echo"], In)
pipe = Recipe("pipe", In)
pipe.add_step("tool", tool, flag=pipe.inputs.flag, loud=pipe.inputs.loud,
              cache=pipe.inputs.cache, ms=pipe.inputs.ms)
"""


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    return pipe_runner(tmp_path, monkeypatch, RECIPE)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--flag", "--no-flag"],
            "option --flag/--no-flag may be given once, but was given"
            " 2 times (--flag, --no-flag); give it once",
        ),
        (["--flag", "--flag"], "but was given 2 times (--flag, --flag); give it once"),
        (
            ["--no-loud", "--no-loud", "--loud"],
            "option --loud/--no-loud may be given once,"
            " but was given 3 times (--no-loud, --no-loud, --loud)",
        ),
        (["--input-cache", "--no-input-cache"], "option --input-cache/--no-input-cache may be"),
    ],
)
def test_a_bool_given_more_than_once_is_refused(
    run: Callable[..., Result], args: list[str], said: str
) -> None:
    result = run(*args, "--dryrun")
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split())


def _line(result: Result) -> str:
    """The dry run's command line for the step."""
    assert result.exit_code == 0, result.output
    return next(line for line in result.output.splitlines() if "$ echo" in line)


def test_a_bool_given_once_takes_that_value(run: Callable[..., Result]) -> None:
    assert "--flag" in _line(run("--flag", "--dryrun"))
    assert "--flag" not in _line(run("--no-flag", "--dryrun"))
    assert "--loud" not in _line(run("--no-loud", "--dryrun"))
    assert "--loud" in _line(run("--dryrun"))  # its default, not given
    assert "--cache" in _line(run("--input-cache", "--dryrun"))


def test_ninja_s_own_flags_and_a_list_s_emptying_keep_their_ways(
    run: Callable[..., Result],
) -> None:
    # ninja's --no-cache is the command's, not the input `cache`'s
    assert "--cache" not in _line(run("--no-cache", "--dryrun"))
    assert "--cache" in _line(run("--input-cache", "--no-cache", "--dryrun"))
    result = run("--ms", "x.ms", "--no-ms", "--dryrun")
    assert "give --ms values or --no-ms, not both" in str(result.exception)
    assert "--ms x.ms --ms y.ms" in _line(run("--ms", "x.ms", "--ms", "y.ms", "--dryrun"))


def test_help_still_shows_the_bool_as_one_option(run: Callable[..., Result]) -> None:
    shown = run("--help").output
    assert "--flag / --no-flag" in shown and "--input-cache / --no-input-cache" in shown
