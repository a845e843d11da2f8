"""A union input with a number or a bool among its members, given on the command
line, reaches the step as the value it spells, as ``run_recipe`` hands it over.

Left as text, ``--threshold 3`` for ``float | str`` reached the function as
``"3"`` (so ``threshold * 2`` was ``"33"``, exit 0) while ``run_recipe`` with 3
gave 3.0; ``--d 1`` for ``bool | int`` became True; ``--help`` said TEXT.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from cli_in_process import in_process

RECIPE = """
from pathlib import Path
from typing import Literal

from shinobi.steps import File, pystep


@pystep
def show(
    a: float | str = 0.5,
    n: int | str = 0,
    d: bool | int = False,
    e: File | int = 0,
    w: int | Literal["auto"] = "auto",
    g: list[int] | int = 0,
) -> str:
    return repr((a, n, d, e, w, g))
"""


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text(textwrap.dedent(RECIPE))
    return "r.py:show"


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["--a", "3"], "(3.0, 0, False, 0, 'auto', 0)"),
        (["--a", "2.5", "--n", "9"], "(2.5, 9, False, 0, 'auto', 0)"),
        (["--a", "auto", "--n", "abc"], "('auto', 'abc', False, 0, 'auto', 0)"),
        (["--d", "1", "--e", "4"], "(0.5, 0, 1, 4, 'auto', 0)"),
        (["--d", "true", "--e", "out.ms"], "(0.5, 0, True, PosixPath('out.ms'), 'auto', 0)"),
        (["--w", "7", "--g", "[1, 2]"], "(0.5, 0, False, 0, 7, [1, 2])"),
        (["--w", "auto", "--g", "5"], "(0.5, 0, False, 0, 'auto', 5)"),
    ],
)
def test_the_command_line_hands_over_what_the_text_spells(
    recipe: str, capsys: pytest.CaptureFixture[str], args: list[str], shown: str
) -> None:
    code, out, err = in_process(capsys, "run", recipe, *args, "--json", "--no-cache")
    assert code == 0, err
    assert json.loads(out)["outputs"]["result"] == shown


def test_help_names_every_member(recipe: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = in_process(capsys, "run", recipe, "--help")
    assert code == 0
    for option, metavar in [
        ("--a", "FLOAT|TEXT"),
        ("--d", "BOOLEAN|INTEGER"),
        ("--e", "FILE|INTEGER"),
        ("--w", "INTEGER|auto"),
        ("--g", "JSON|INTEGER"),
    ]:
        assert f"{option} {metavar} " in out, option


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--w", "AUTO"],
            "input 'w' (--w): 'AUTO' fits none of its types (Input should be a valid integer,"
            " unable to parse string as an integer; Input should be 'auto')",
        ),
        (["--d", "maybe"], "input 'd' (--d): 'maybe' fits none of its types (Input should be"),
    ],
)
def test_a_value_no_member_takes_names_the_input_and_every_member(
    recipe: str, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    """The first member's refusal alone named an input ``w.int`` and one type."""
    code, _, err = in_process(capsys, "run", recipe, *args, "--dryrun")
    assert code == 2
    assert said in err, err
    assert ".int'" not in err


ENUMS = """
import enum

from shinobi.steps import pystep


class Freq(enum.Enum):
    L = 1.4
    S = 2.5


class Colour(enum.Enum):
    red = 1
    blue = "b"


@pystep
def tune(fr: Freq = Freq.L, col: Colour = Colour.blue) -> str:
    return f"{fr.name} {col.name}"
"""


@pytest.mark.parametrize(
    ("args", "shown"),
    [([], "L blue"), (["--fr", "2.5"], "S blue"), (["--col", "1", "--fr", "1.4"], "L red")],
)
def test_an_enum_of_floats_or_of_mixed_values_is_chosen_by_its_values(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    shown: str,
) -> None:
    """Only text and int enums were choices: ``--fr 2.5`` was refused as "Input
    should be 1.4 or 2.5", and ``--col 1`` could not name a member at all."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "e.py").write_text(textwrap.dedent(ENUMS))
    code, out, err = in_process(capsys, "run", "e.py:tune", *args, "--json", "--no-cache")
    assert code == 0, err
    assert json.loads(out)["outputs"]["result"] == shown
    code, out, _ = in_process(capsys, "run", "e.py:tune", "--help")
    assert "--fr [1.4|2.5]" in out and "--col [1|b]" in out


WIRED = """
from typing import Literal

from pydantic import BaseModel

from shinobi import Recipe
from shinobi.loaders import build_model
from shinobi.steps import pystep


@pystep
def word(text: str = "AUTO") -> str:
    return text


@pystep
def show(w: int | Literal["auto"] = "auto") -> str:
    return repr(w)


class In(BaseModel):
    x: str = "auto"
    lit: str = "auto"


top = Recipe("top", In, build_model("Out", {}))
top.add_step("given", show, w=top.inputs.x)
top.add_step("spelled", show, w="AUTO")
top.add_step("word", word)
top.add_step("late", show, w=top.outputs.word.result)
"""


@pytest.mark.parametrize(
    ("args", "step"),
    [(["--x", "AUTO", "--dryrun"], "given"), (["--dryrun"], "spelled"), ([], "late")],
)
def test_a_wired_value_no_member_takes_names_the_input_and_every_member(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    step: str,
) -> None:
    """A step's union input wired a value no member takes, known before the run
    (a recipe input, a literal) or only once an upstream step ran: named as the
    input, with every member's refusal, as the command line's own refusal says it."""
    monkeypatch.chdir(tmp_path)
    recipe = WIRED
    if step != "spelled":  # refused before the run, it would speak first
        recipe = recipe.replace('top.add_step("spelled", show, w="AUTO")\n', "")
    (tmp_path / "r.py").write_text(recipe)
    code, _, err = in_process(capsys, "run", "r.py:top", *args, "--no-cache")
    assert code != 0
    assert f"step {step!r}" in err, err
    assert "input 'w': 'AUTO' fits none of its types (Input should be a valid integer" in err, err
    assert "Input should be 'auto')" in err, err
    assert "'w.int'" not in err, err
