"""A misspelt key inside a model input is refused, not dropped.

``--solve '{"solnt": 10}'`` (or ``{"solve": {"solnt": 10}}`` from Python) ran
on ``solint``'s default without a word, as pydantic ignores keys a model does
not know; each element of a ``list[Model]`` input alike. A model that says
what to do with extra keys keeps its choice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process as _ninja
from pydantic import BaseModel, ConfigDict, Field, model_validator

from shinobi.errors import InputError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe

CAL = """
import shinobi
from pydantic import BaseModel

class Solve(BaseModel):
    solint: int = 60
    refant: int = 0

@shinobi.pystep
def cal(solve: Solve = Solve(), jobs: list[Solve] = []) -> str:
    return f"solve={solve!r} jobs={jobs!r}"
"""


class Solve(BaseModel):
    solint: int = 60
    refant: int = Field(0, alias="refAnt")


class Outer(BaseModel):
    solve: Solve = Solve()


class Ignoring(BaseModel):
    model_config = ConfigDict(extra="ignore")  # written out: the model's own choice
    solint: int = 60


class Allowing(BaseModel):
    model_config = ConfigDict(extra="allow")
    solint: int = 60


class Reshaped(BaseModel):
    solint: int = 60

    @model_validator(mode="before")
    @classmethod
    def _rename(cls, data: Any) -> Any:
        return {"solint": data.pop("interval")} if "interval" in data else data


class In(BaseModel):
    solve: Solve | None = None
    jobs: list[Solve] = []
    by_name: dict[str, Solve] = {}
    pair: tuple[int, Outer] = (0, Outer())
    ignoring: Ignoring = Ignoring()
    allowing: Allowing = Allowing()
    reshaped: Reshaped = Reshaped()


class Out(BaseModel):
    pass


def _recipe() -> Recipe:
    class Say(BaseModel):
        word: str = "x"

    say = Cab("say", ["true"], Say, Out, {"word": ParamMeta(positional=True)})
    recipe = Recipe("r", In, Out)
    recipe.add_step("s", say)
    return recipe


def _refusal(tmp_path: Path, values: dict[str, Any]) -> str:
    with pytest.raises(InputError) as caught:
        run_recipe(_recipe(), values, cwd=tmp_path, use_cache=False)
    assert not (tmp_path / ".shinobi").exists()  # refused before anything ran
    return str(caught.value)


def test_cli_refuses_a_misspelt_key_in_a_model_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cal.py"
    path.write_text(CAL)
    code, out, err = _ninja(capsys, "run", f"{path}:cal", "--solve", '{"solnt": 10, "refant": 3}')
    assert code == 2, out + err
    assert err.strip().splitlines() == [
        "ninja: error: recipe 'cal', input 'solve.solnt' (--solve): no such key;"
        " did you mean 'solint'?"
    ], err


def test_cli_refuses_a_misspelt_key_in_one_element_of_a_list_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cal.py"
    path.write_text(CAL)
    args = ("--jobs", '{"solint": 5}', "--jobs", '{"zzz": 7}')
    code, out, err = _ninja(capsys, "run", f"{path}:cal", *args, "--dryrun")
    assert code == 2, out + err
    assert "input 'jobs.1.zzz' (--jobs): no such key (its keys: solint, refant)" in err, err


def test_python_api_refuses_nested_keys_wherever_a_model_is_read(tmp_path: Path) -> None:
    said = _refusal(tmp_path, {"solve": {"solnt": 1}})
    assert said == "recipe 'r', input 'solve.solnt': no such key; did you mean 'solint'?"
    assert "'jobs.0.refnt'" in _refusal(tmp_path, {"jobs": [{"refnt": 1}]})
    assert "'by_name.a.x'" in _refusal(tmp_path, {"by_name": {"a": {"x": 1}}})
    assert "'pair.1.solve.soint'" in _refusal(tmp_path, {"pair": [1, {"solve": {"soint": 2}}]})


def test_names_and_aliases_of_nested_fields_are_taken(tmp_path: Path) -> None:
    given = {"solve": {"solint": 1, "refAnt": 2}, "jobs": [{"refant": 3}], "pair": [1, {}]}
    assert run_recipe(_recipe(), given, cwd=tmp_path, use_cache=False).ok


def test_a_model_that_says_what_to_do_with_extra_keys_keeps_its_choice(tmp_path: Path) -> None:
    given = {"ignoring": {"other": 1}, "allowing": {"other": 2}, "reshaped": {"interval": 5}}
    assert run_recipe(_recipe(), given, cwd=tmp_path, use_cache=False).ok


def test_a_model_instance_is_not_walked(tmp_path: Path) -> None:
    given = {"solve": Solve(solint=3), "jobs": [Solve()]}
    assert run_recipe(_recipe(), given, cwd=tmp_path, use_cache=False).ok
