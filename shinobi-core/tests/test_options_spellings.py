"""Every spelling of an input's option has its ``--no-`` form, and a bool has them all.

An input is spelt by its dashed name, its field name (``--n-max``, ``--n_max``)
and its pydantic alias (``--nMax``). A list input that may be given as empty
had ``--no-ant-list`` alone: ``--no-antList`` and ``--no-ant_list`` were
refused as "No such option" although ``--antList`` and ``--ant_list`` were
options. A bool had no field-name spelling at all (``--dry_flag`` was refused),
unlike every other type. Each spelling now has its ``--no-`` form, all of them
given once between them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import in_process
from click.testing import Result
from recipe_cli import pipe_runner

RECIPE = """
from pydantic import BaseModel, Field
from shinobi.steps import Cab, Recipe

class In(BaseModel):
    ant_list: list[str] = Field(["a", "b"], alias="antList")
    plain_list: list[str] = ["x"]
    dry_flag: bool = False
    n_max: int = 1

class ToolIn(BaseModel):
    ant_list: list[str] = []
    plain_list: list[str] = []
    dry_flag: bool = False
    n_max: int = 1

tool = Cab("tool", ["echo"], ToolIn)
pipe = Recipe("pipe", In)
pipe.add_step("tool", tool, ant_list=pipe.inputs.ant_list, plain_list=pipe.inputs.plain_list,
              dry_flag=pipe.inputs.dry_flag, n_max=pipe.inputs.n_max)
"""


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    return pipe_runner(tmp_path, monkeypatch, RECIPE)


def _words(result: Result) -> list[str]:
    """The dry run's command line for the step, as words."""
    assert result.exit_code == 0, result.output
    return next(line for line in result.output.splitlines() if "$ echo" in line).split()


@pytest.mark.parametrize("flag", ["--no-ant-list", "--no-antList", "--no-ant_list"])
def test_each_spelling_of_a_list_empties_it(run: Callable[..., Result], flag: str) -> None:
    words = _words(run(flag, "--dryrun"))
    assert "--ant_list" not in words and "--plain_list" in words


def test_a_list_without_alias_is_emptied_by_its_field_name_too(
    run: Callable[..., Result],
) -> None:
    assert "--plain_list" not in _words(run("--no-plain_list", "--dryrun"))


@pytest.mark.parametrize(
    ("args", "on"), [(["--dry_flag"], True), (["--no-dry_flag"], False), (["--dry-flag"], True)]
)
def test_a_bool_takes_its_field_name_as_other_types_do(
    run: Callable[..., Result], args: list[str], on: bool
) -> None:
    assert ("--dry_flag" in _words(run(*args, "--dryrun"))) is on


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--no-ant-list", "--no-antList"],
            "option --no-ant-list may be given once, but was given 2 times"
            " (--no-ant-list, --no-antList); give it once",
        ),
        (
            ["--dry-flag", "--no-dry_flag"],
            "option --dry-flag/--no-dry-flag may be given once, but was given 2 times"
            " (--dry-flag, --no-dry_flag); give it once",
        ),
        (
            ["--n-max", "1", "--n_max", "2"],
            "option --n-max takes one value, but was given 2 ('1', '2'); give it once",
        ),
    ],
)
def test_two_spellings_of_one_input_are_refused_as_given_twice(
    run: Callable[..., Result], args: list[str], said: str
) -> None:
    result = run(*args, "--dryrun")
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split())
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args", [["--antList", "z", "--no-ant_list"], ["--no-antList", "--ant-list", "z"]]
)
def test_values_and_an_alias_s_no_form_are_refused(
    run: Callable[..., Result], args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = in_process(capsys, "run", "r.py:pipe", *args, "--dryrun")
    assert code == 2, err
    assert err.strip().splitlines() == [
        "ninja: error: give --ant-list values or --no-ant-list, not both"
    ]


def test_help_lists_each_input_once_with_its_spellings(run: Callable[..., Result]) -> None:
    shown = run("--help").output
    said = " ".join(shown.split())
    assert "--dry-flag, --dry_flag / --no-dry-flag, --no-dry_flag" in said
    assert "--ant-list, --ant_list, --antList TEXT" in said
    assert "--no-ant-listfornone" in "".join(shown.split())  # wrapped at any dash
    for first in ("--dry-flag,", "--ant-list,", "--plain-list,", "--n-max,"):
        assert shown.count(first) == 1, shown
    assert "--no-antList" not in shown and "--no-ant_list" not in shown  # one for none is said


CACHE_ALIAS = """
from pydantic import BaseModel, Field
from shinobi.steps import Cab, Recipe

class In(BaseModel):
    keep: list[str] = Field(["a"], alias="cache")

class ToolIn(BaseModel):
    keep: list[str] = []

tool = Cab("tool", ["echo"], ToolIn)
pipe = Recipe("pipe", In)
pipe.add_step("tool", tool, keep=pipe.inputs.keep)
"""


def test_a_list_s_alias_whose_no_form_is_ninja_s_steps_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--no-cache`` is ninja's: the alias is ``--input-cache``, as a bool's would be."""
    run = pipe_runner(tmp_path, monkeypatch, CACHE_ALIAS)
    assert "--keep" not in _words(run("--no-input-cache", "--dryrun"))
    assert "--keep" in _words(run("--no-cache", "--dryrun"))  # still ninja's
    assert "--keep, --input-cache TEXT" in run("--help").output


NEAR_CLASH = """
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe

class In(BaseModel):
    dry_run: bool = False
    max_workers: int = 1

tool = Cab("tool", ["echo"], In)
pipe = Recipe("pipe", In)
pipe.add_step("tool", tool, dry_run=pipe.inputs.dry_run, max_workers=pipe.inputs.max_workers)
"""


def test_an_input_spelt_like_ninja_s_own_option_steps_aside_in_every_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--dry_run`` set an input `dry_run` and ran for real: one keystroke from
    ninja's --dry-run, it is refused instead, and the input is ``--input-dry_run``."""
    run = pipe_runner(tmp_path, monkeypatch, NEAR_CLASH)
    refused = run("--dry_run")
    assert refused.exit_code == 2 and "No such option '--dry_run'" in refused.output
    assert not (tmp_path / ".shinobi").exists()  # nothing ran
    assert "--dry_run" in _words(run("--input-dry_run", "--dryrun"))
    shown = run("--help").output
    assert "--input-dry-run, --input-dry_run" in shown
    assert "--input-max-workers, --input-max_workers INTEGER" in shown


TYPED = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe
from shinobi.steps.types import MS, File

class In(BaseModel):
    count: int = 1
    scale: float = 1.0
    label: str = "x"
    model: File | None = None
    vis: list[MS] = []
    where: Path = Path(".")

pipe = Recipe("pipe", In)
pipe.add_step("noop", Cab("noop", "true"))
"""


def test_help_says_what_each_input_takes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every input showed its own name upper-cased (``--count COUNT``), which says
    nothing of the type the option is checked against."""
    shown = " ".join(pipe_runner(tmp_path, monkeypatch, TYPED)("--help").output.split())
    for option in (
        "--count INTEGER",
        "--scale FLOAT",
        "--label TEXT",
        "--model FILE",
        "--vis MS",
        "--where PATH",
    ):
        assert option in shown, shown


def test_a_list_default_shows_each_value_as_it_is_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``["a b", "c"]`` showed as ``[default: a b c]``, three values to the eye."""
    text = TYPED.replace('label: str = "x"', 'label: list[str] = ["a b", "c"]')
    shown = " ".join(pipe_runner(tmp_path, monkeypatch, text)("--help").output.split())
    assert "[default: 'a b' c]" in shown, shown
