"""A list input whose default has values can be given as empty: ``--no-NAME``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cli_in_process import in_process as _ninja

RECIPE = """
from pydantic import BaseModel, Field
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    antennas: list[str] = Field(["ea01", "ea02"], description="antennas to flag")
    spws: list[int] = []
    ref_ant: list[str] = ["ea05"]

class SayIn(BaseModel):
    words: list[str] = []

say = Cab("say", "/bin/echo", SayIn, None, {"words": ParamMeta(positional=True)})
flag = Recipe("flag", In)
flag.add_step("say", say, words=flag.inputs.antennas)
"""


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "recipe.py"
    path.write_text(textwrap.dedent(RECIPE))
    monkeypatch.chdir(tmp_path)
    return f"{path}:flag"


def _argv(out: str) -> str:
    """The command line the dry run shows for the step (inside its box)."""
    return next(line for line in out.splitlines() if "/bin/echo" in line).strip("│ ")


def test_the_default_applies_when_the_option_is_not_given(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _ninja(capsys, "run", recipe, "--dryrun")
    assert code == 0, err
    assert _argv(out).endswith("/bin/echo ea01 ea02")


def test_no_name_gives_the_list_as_empty(recipe: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _ninja(capsys, "run", recipe, "--no-antennas", "--dryrun")
    assert code == 0, err
    assert _argv(out).endswith("/bin/echo")


def test_values_and_no_name_together_are_refused(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _ninja(capsys, "run", recipe, "--antennas", "ea03", "--no-antennas", "--dryrun")
    assert code == 2
    assert err.count("\n") == 1 and "--antennas" in err and "--no-antennas" in err


def test_help_says_how_to_give_none_and_only_where_there_is_a_default(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _ninja(capsys, "run", recipe, "--help")
    assert code == 0
    text = "".join(out.split())  # help wraps lines, even inside an option's name
    assert "--no-antennasfornone" in text
    assert "--no-ref-antfornone" in text
    assert "--no-spws" not in text  # empty by default: leaving it out gives none


CLASHING = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    no_x: bool = False  # declared first, it took --no-x, and x could not be emptied
    x: list[str] = ["a"]

class SayIn(BaseModel):
    words: list[str] = []

say = Cab("say", "/bin/echo", SayIn, None, {"words": ParamMeta(positional=True)})
clash = Recipe("clash", In)
clash.add_step("say", say, words=clash.inputs.x)
"""


def _emptied_then_help(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: str,
    recipe: str,
    emptying: str,
) -> str:
    """Dry-run ``recipe`` of ``source`` with ``emptying`` given, which must leave the
    echo with no words; then its ``--help``, returned."""
    path = tmp_path / "recipe.py"
    path.write_text(textwrap.dedent(source))
    monkeypatch.chdir(tmp_path)
    code, out, err = _ninja(capsys, "run", f"{path}:{recipe}", emptying, "--dryrun")
    assert code == 0, err
    assert _argv(out).endswith("/bin/echo")
    return _ninja(capsys, "run", f"{path}:{recipe}", "--help")[1]


def test_no_name_empties_its_list_whatever_input_is_declared_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _emptied_then_help(tmp_path, monkeypatch, capsys, CLASHING, "clash", "--no-x")
    assert "--input-no-x, --no_x / --no-input-no-x, --no-no_x" in out


NAMED_CACHE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    cache: list[str] = ["a"]

say = Cab("say", "/bin/echo", In, None, {"cache": ParamMeta(positional=True)})
show = Recipe("show", In)
show.add_step("say", say, cache=show.inputs.cache)
"""


def test_a_list_whose_no_name_is_ninja_s_own_option_can_still_be_emptied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--no-cache` is ninja's: the list `cache` could not be given as empty."""
    out = _emptied_then_help(tmp_path, monkeypatch, capsys, NAMED_CACHE, "show", "--no-input-cache")
    assert "--no-input-cachefornone" in "".join(out.split())  # help wraps at the dashes
