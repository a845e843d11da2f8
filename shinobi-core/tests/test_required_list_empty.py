"""A list input without a default can be given as empty on the command line.

Repeating ``--xs`` gives one value at least, and ``--xs '[]'`` is one value
``'[]'``: a step that takes an empty list as its required input (no sources to
subtract, say) could be run with one by ``run_recipe`` but never by ``ninja
run``. ``--no-xs`` gives it, as it does for a list with values by default.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import in_process

RECIPE = """
from typing import Annotated

from pydantic import Field

from shinobi.steps import pystep


@pystep
def show(xs: list[int], some: Annotated[list[int], Field(min_length=1)]) -> str:
    return repr((xs, some))
"""


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text(RECIPE)
    return "r.py:show"


def test_no_name_gives_a_required_list_as_empty(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = in_process(capsys, "run", recipe, "--no-xs", "--some", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"]["result"] == "([], [1])"


def test_help_offers_it_where_the_list_may_be_empty(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = in_process(capsys, "run", recipe, "--help")
    assert code == 0
    shown = " ".join(out.split())
    assert "(repeat the option for each value); --no-xs for none [required]" in shown
    assert "--no-some" not in shown  # at least one value: empty, it is refused


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--no-xs", "--xs", "1", "--some", "1"], "give --xs values or --no-xs, not both"),
        (["--no-some", "--xs", "1"], "No such option '--no-some'"),
        (["--some", "1"], "input 'xs' (--xs): Field required"),
    ],
)
def test_what_stays_refused(
    recipe: str, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    code, _, err = in_process(capsys, "run", recipe, *args, "--dryrun")
    assert code == 2
    assert said in err, err
