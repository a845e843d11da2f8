"""A list input's ``--no-NAME`` (give it as empty) is given once, as a bool's flags are.

``--no-ms --no-ms`` passed as if given once, though any other input given twice
is refused (a bool's ``--flag --flag`` included); and ``--no-ms`` with values
for ``--ms`` is refused either way round.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import in_process
from click.testing import Result
from recipe_cli import pipe_runner

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe

class In(BaseModel):
    ms: list[str] = ["a.ms"]

tool = Cab("tool", ["echo"], In)
pipe = Recipe("pipe", In)
pipe.add_step("tool", tool, ms=pipe.inputs.ms)
"""


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    return pipe_runner(tmp_path, monkeypatch, RECIPE)


def test_no_name_given_twice_is_refused(run: Callable[..., Result]) -> None:
    result = run("--no-ms", "--no-ms", "--dryrun")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert (
        "option --no-ms may be given once, but was given 2 times (--no-ms, --no-ms); give it once"
        in said
    )
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [["--ms", "x.ms", "--no-ms"], ["--no-ms", "--ms", "x.ms"]])
def test_no_name_with_values_is_refused_either_way_round(
    run: Callable[..., Result], args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = in_process(capsys, "run", "r.py:pipe", *args, "--dryrun")
    assert code == 2, err
    assert err.strip().splitlines() == ["ninja: error: give --ms values or --no-ms, not both"]


def test_no_name_once_still_gives_the_list_as_empty(run: Callable[..., Result]) -> None:
    result = run("--no-ms", "--dryrun")
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if "$ echo" in line)
    assert "--ms" not in line and "a.ms" not in line
