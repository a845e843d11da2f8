"""Recipe inputs on the command line, and what the loader says about targets.

Each test is a case the first round did not try: an option left without its
value, an aliased input field, an empty path, a misspelt cab name, a group
called without its command.
"""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import pytest
from cli_in_process import in_process as _ninja

RECIPE = """
import enum
from pathlib import Path
from typing import Literal
from pydantic import BaseModel, Field
from shinobi.steps import Cab, ParamMeta, Recipe

class Speed(enum.Enum):
    fast = "quick"
    slow = "careful"

class In(BaseModel):
    target: Path = Field(description="the file to make")
    names: list[str] = Field(default_factory=list, description="words to say")
    mode: Literal["a", "b"] = "a"
    speed: Speed = Speed.fast
    count: int = Field(1, alias="n")

class SayIn(BaseModel):
    words: list[str] = []

class TouchIn(BaseModel):
    out: Path

class TouchOut(BaseModel):
    out: Path | None = None

say = Cab("say", "/bin/echo", SayIn, None, {"words": ParamMeta(positional=True)})
touch = Cab("touch", "/bin/touch", TouchIn, TouchOut, {"out": ParamMeta(positional=True)})
pipe = Recipe("pipe", In)
pipe.add_step("say", say, words=pipe.inputs.names)
pipe.add_step("make", touch, out=pipe.inputs.target)

class CountIn(BaseModel):
    count: int = Field(1, alias="n")

class NumIn(BaseModel):
    words: list[int] = []

counted = Recipe("counted", CountIn)
counted.add_step("say", Cab("num", "/bin/echo", NumIn, None, {"words": ParamMeta(positional=True)}),
                 words=[counted.inputs.count])
"""


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "recipe.py"
    path.write_text(textwrap.dedent(RECIPE))
    monkeypatch.chdir(tmp_path)
    return str(path)


@pytest.mark.parametrize(
    ("words", "option"),
    [
        (["--target", "--dryrun"], "--target"),
        (["--target", "x", "--names", "--dryrun"], "--names"),
        (["--target", "x", "--names", "-b", "native", "--dryrun"], "--names"),
        (["--target", "x", "-b", "--dryrun"], "-b"),
        # a short option with its value run on is that option as well
        (["--target", "-bdocker", "--dryrun"], "--target"),
        (["--target", "-j2", "--dryrun"], "--target"),
    ],
)
def test_an_option_left_without_its_value_is_refused_not_fed_the_next_option(
    recipe: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], words: list[str], option: str
) -> None:
    """click would give --target the word --dryrun: the dry run became a real run."""
    code, out, err = _ninja(capsys, "run", f"{recipe}:pipe", *words)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("ninja: error:"), err
    assert f"option {option} needs a value" in err
    assert not (tmp_path / "--dryrun").exists()
    assert not (tmp_path / "x").exists()


def test_such_a_value_can_still_be_given_with_an_equals_sign(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _ninja(capsys, "run", f"{recipe}:pipe", "--target=--dryrun", "--dryrun")
    assert code == 0, err
    assert "/bin/touch ./--dryrun" in out or "/bin/touch --dryrun" in out


def test_an_aliased_input_takes_the_value_given_on_the_command_line(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """pydantic validates by alias: the value keyed by the field's name was dropped."""
    for option in ("--count", "--n"):
        code, out, err = _ninja(capsys, "run", f"{recipe}:counted", option, "5", "--dryrun")
        assert code == 0, err
        assert "/bin/echo 5" in out, out


def test_an_aliased_input_refused_by_its_model_names_its_option(
    tmp_path: Path, recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pos.py"
    path.write_text(
        RECIPE.replace('count: int = Field(1, alias="n")', 'count: int = Field(1, alias="n", gt=0)')
    )
    code, _, err = _ninja(capsys, "run", f"{path}:counted", "--count", "0", "--dryrun")
    assert code == 2
    assert "(--count)" in err, err


@pytest.mark.parametrize("option", ["--count", "--n"])
def test_an_alias_stays_an_option_when_the_model_also_takes_names(
    tmp_path: Path, recipe: str, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    """With populate_by_name the alias option (``--nMax``) was gone, as running.md
    promises both; a value it refuses names the option too."""
    path = tmp_path / "by_name.py"
    path.write_text(
        RECIPE.replace(
            'class CountIn(BaseModel):\n    count: int = Field(1, alias="n")',
            "class CountIn(BaseModel):\n    model_config = {'populate_by_name': True}\n"
            '    count: int = Field(1, alias="n", gt=0)',
        )
    )
    code, out, err = _ninja(capsys, "run", f"{path}:counted", option, "5", "--dryrun")
    assert code == 0, err
    assert "/bin/echo 5" in out, out
    code, _, err = _ninja(capsys, "run", f"{path}:counted", option, "0", "--dryrun")
    assert code == 2 and "(--count)" in err, err


def test_an_input_named_json_by_its_alias_is_given_as_input_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``json_: str = Field(alias="json")`` got only ``--json-``/``--json_``: the alias
    was dropped for colliding with ninja's --json, with no --input-json in its place."""
    path = tmp_path / "al.py"
    path.write_text(
        RECIPE.replace(
            'class CountIn(BaseModel):\n    count: int = Field(1, alias="n")',
            "class CountIn(BaseModel):\n    model_config = {'populate_by_name': True}\n"
            '    count: int = Field(1, alias="n")\n    json_: str = Field("j", alias="json")',
        ).replace("words=[counted.inputs.count]", "words=[counted.inputs.json_]")
    )
    code, out, err = _ninja(capsys, "run", f"{path}:counted", "--help")
    # `--json_` is one keystroke from ninja's --json: the field's spelling steps aside too
    assert code == 0 and "--input-json, --input-json_" in out and "--json-" not in out, out
    assert "--json_ " not in out, out
    code, out, err = _ninja(capsys, "run", f"{path}:counted", "--input-json", "7", "--dryrun")
    assert code == 0 and "/bin/echo 7" in out, err


def test_an_empty_path_is_refused_instead_of_meaning_this_directory(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _ninja(capsys, "run", f"{recipe}:pipe", "--target", "", "--dryrun")
    assert code == 2, out
    assert "--target" in err and "empty path" in err
    assert err.count("\n") == 1


def test_recipe_help_shows_the_values_of_a_choice_and_how_to_give_a_list(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _ninja(capsys, "run", f"{recipe}:pipe", "--help")
    assert code == 0
    assert "--mode [a|b]" in out
    assert "--speed [quick|careful]" in out
    assert "repeat the option" in " ".join(out.split())


def test_an_enum_input_is_refused_with_its_values(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _ninja(capsys, "run", f"{recipe}:pipe", "--target", "x", "--speed", "fast")
    assert code == 2
    assert "'quick'" in err and "'careful'" in err


def test_inputs_before_the_target_say_where_they_go(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _ninja(capsys, "run", "--target", "x", f"{recipe}:pipe")
    assert code == 2
    assert "inputs go after FILE.py:NAME" in err
    assert err.count("\n") == 1


def test_a_misspelt_cab_target_gets_a_suggestion(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A single cab or pystep is a valid target, so it is a valid suggestion too."""
    code, _, err = _ninja(capsys, "run", f"{recipe}:tuch")
    assert code == 2
    assert "did you mean 'touch'?" in err
    assert "single steps: say, touch" in err


def test_a_model_class_named_as_target_is_called_a_type(
    recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _ninja(capsys, "run", f"{recipe}:In")
    assert code == 2
    assert "is a type, not a Recipe" in err
    assert "recipes defined there: pipe, counted" in err


def test_a_null_byte_in_the_recipe_file_gives_no_line_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nul.py"
    path.write_bytes(b"x = 1\x00\n")
    code, _, err = _ninja(capsys, "run", f"{path}:r")
    assert code == 2
    assert "None" not in err and "syntax error" in err


@pytest.mark.parametrize("words", [[], ["cache"], ["config"]])
def test_a_group_without_its_command_prints_its_help_not_a_squeezed_error(
    capsys: pytest.CaptureFixture[str], words: list[str]
) -> None:
    code, out, err = _ninja(capsys, *words)
    shown = out + err  # click 8.1 prints it to stdout with 0, 8.2 on to stderr with 2
    assert code in (0, 2)
    assert "ninja: error" not in shown
    assert shown.startswith("Usage: ninja") and "Commands:" in shown
    assert len(shown.splitlines()) > 5


def test_recipe_help_says_what_the_recipe_says_about_itself(
    tmp_path: Path, recipe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The generic text of `ninja run --help` alone did not say which recipe it was."""
    path = tmp_path / "described.py"
    path.write_text(
        textwrap.dedent(RECIPE).replace(
            'pipe = Recipe("pipe", In)', 'pipe = Recipe("pipe", In, description="Say, then make.")'
        )
        + "\nimport shinobi\n\n@shinobi.pystep\ndef add(x: int) -> int:\n"
        '    """Add one to x."""\n    return x + 1\n'
    )
    code, out, _ = _ninja(capsys, "run", f"{path}:pipe", "--help")
    assert code == 0
    assert "is the recipe 'pipe': Say, then make." in " ".join(out.split())
    code, out, _ = _ninja(capsys, "run", f"{path}:add", "--help")
    assert "is the pystep 'add': Add one to x." in " ".join(out.split())


def test_inputs_whose_options_would_clash_each_get_one_of_their_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`backend` is renamed --input-backend, which is `input_backend`'s own spelling:
    click warned about the duplicate and one of the two inputs could not be set."""
    path = tmp_path / "clash.py"
    path.write_text(
        textwrap.dedent(
            """
            from pydantic import BaseModel
            from shinobi.steps import Cab, ParamMeta, Recipe

            class In(BaseModel):
                backend: int = 1
                input_backend: int = 2

            class NumIn(BaseModel):
                words: list[int] = []

            echo = Cab("echo", "/bin/echo", NumIn, None, {"words": ParamMeta(positional=True)})
            r = Recipe("r", In)
            r.add_step("say", echo, words=[r.inputs.backend, r.inputs.input_backend])
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # click's "used more than once"
        code, out, err = _ninja(
            capsys, "run", f"{path}:r", "--input-backend", "7", "--input_backend", "8", "--dryrun"
        )
    assert code == 0, err
    assert "/bin/echo 7 8" in out


@pytest.mark.parametrize(
    ("words", "shown"),
    [(["runs"], "runs"), (["cache", "ls"], "cache ls"), (["run"], "run"), (["compile"], "compile")],
)
@pytest.mark.parametrize("option", ["--debug", "--version"])
def test_a_global_option_after_the_command_says_to_put_it_first(
    capsys: pytest.CaptureFixture[str], words: list[str], shown: str, option: str
) -> None:
    code, _, err = _ninja(capsys, *words, option)  # run and compile: no target yet
    assert code == 2
    if option == "--version":  # it shows the version, of no command: nothing to put first
        assert "--version is an option of ninja itself: ninja --version" in err, err
        assert shown not in err.partition("itself")[2]
    else:
        assert f"put it first (ninja {option} {shown} ...)" in err, err


LITERALS = """
import os
from typing import Literal
from pydantic import BaseModel, Field
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    n: Literal[1, 2] = 1
    home: str = Field("x", description="from the environment")

class Words(BaseModel):
    words: list[int | str] = []

class Broken(BaseModel):
    home: str = Field(default_factory=lambda: os.environ["AUDIT9_SURELY_UNSET"])

echo = Cab("echo", "/bin/echo", Words, None, {"words": ParamMeta(positional=True)})
r = Recipe("r", In)
r.add_step("say", echo, words=[r.inputs.n])
broken = Recipe("broken", Broken)
broken.add_step("say", echo, words=[broken.inputs.home])
"""


@pytest.fixture
def literals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "literals.py"
    path.write_text(textwrap.dedent(LITERALS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AUDIT9_SURELY_UNSET", raising=False)
    return str(path)


def test_a_literal_number_input_takes_its_number(
    literals: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "2" reached pydantic as text, and Literal[1, 2] refused it: 'Input should be 1 or 2'."""
    code, out, err = _ninja(capsys, "run", f"{literals}:r", "--n", "2", "--dryrun")
    assert code == 0, err
    assert "/bin/echo 2" in out


def test_a_default_factory_that_fails_is_the_recipes_error_not_ninjas(
    literals: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--help called the factory to show the default: an internal error, exit 70, even
    for --help and even when the input was given."""
    code, out, err = _ninja(capsys, "run", f"{literals}:broken", "--help")
    assert code == 0, err
    assert "--home" in out
    code, out, err = _ninja(capsys, "run", f"{literals}:broken", "--home", "y", "--dryrun")
    assert code == 0, err
    code, _, err = _ninja(capsys, "run", f"{literals}:broken", "--dryrun")
    assert code == 2 and "internal error" not in err
    assert "AUDIT9_SURELY_UNSET" in err


def test_an_aliased_input_given_by_its_name_through_the_api_is_not_dropped(
    tmp_path: Path,
) -> None:
    from pydantic import BaseModel, Field

    from shinobi.runner import run_recipe
    from shinobi.steps import Cab, ParamMeta, Recipe

    class CountIn(BaseModel):
        count: int = Field(1, alias="n")

    class NumIn(BaseModel):
        words: list[int] = []

    echo = Cab("num", "/bin/echo", NumIn, None, {"words": ParamMeta(positional=True)})
    counted = Recipe("counted", CountIn)
    counted.add_step("say", echo, words=[counted.inputs.count])
    for given in ({"count": 5}, {"n": 5}):
        result = run_recipe(counted, given, cwd=tmp_path, use_cache=False)
        assert result.ok and result.stdout == "5\n", (given, result.stdout)


WHOLE_MODEL = """
from pydantic import BaseModel, model_validator
from shinobi.steps import Cab, Recipe

class Span(BaseModel):
    low: int = 0
    high: int = 1

    @model_validator(mode="after")
    def ordered(self):
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self

pipe = Recipe("pipe", Span)
pipe.add_step("noop", Cab("noop", "true"))
"""


def test_inputs_a_model_validator_refuses_together_are_named_as_its_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No one field is to blame: the message said ``input '?'``."""
    path = tmp_path / "span.py"
    path.write_text(WHOLE_MODEL)
    code, _, err = _ninja(capsys, "run", f"{path}:pipe", "--low", "5", "--dryrun")
    assert code == 2, err
    assert err.strip() == (
        "ninja: error: recipe 'pipe', its inputs: Value error, low must not exceed high"
    )


def test_an_input_renamed_for_one_of_ninjas_options_is_named_when_spelt_plainly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An input ``b`` is ``--input-b`` (``--b`` is one dash from ninja's ``-b``):
    ``--b 5`` was refused with "Did you mean '--x'?", naming another input."""
    path = tmp_path / "short.py"
    path.write_text(
        "from pydantic import BaseModel\nfrom shinobi.steps import Cab, ParamMeta\n"
        "class In(BaseModel):\n    b: int\n    x: int = 1\n"
        "e = Cab('e', ['echo'], In, None, {'b': ParamMeta(positional=True)})\n"
    )
    code, _, err = _ninja(capsys, "run", f"{path}:e", "--b", "5", "--dryrun")
    assert code == 2
    assert (
        "No such option '--b': the recipe's input is --input-b here (--b is too near one of"
        " ninja's own options)"
    ) in err, err
    code, _, err = _ninja(capsys, "run", f"{path}:e", "--input-b", "5", "--dryrun")
    assert code == 0, err
