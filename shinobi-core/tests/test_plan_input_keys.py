"""run_recipe() refuses an input the recipe does not have, as the command line does.

A pydantic inputs model ignores keys it does not know, so a misspelt key ran
the recipe on that input's default without a word.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from shinobi.errors import UsageError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class In(BaseModel):
    msg: str = "hi"
    count: int = 1


class Aliased(BaseModel):
    n_max: int = Field(1, alias="nMax")
    size: int = Field(1, validation_alias=AliasChoices("size", "imsize"))


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")
    msg: str = "hi"


class Out(BaseModel):
    pass


def _pipe(inputs: type[BaseModel] = In) -> Recipe:
    echo = Cab("echo", ["true"], In, Out, {"msg": ParamMeta(positional=True)})
    pipe = Recipe("pipe", inputs, Out)
    pipe.add_step("e", echo)
    return pipe


def test_a_misspelt_input_is_refused_with_the_near_miss(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        run_recipe(_pipe(), {"mgs": "x"}, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == "recipe 'pipe' has no input 'mgs'; did you mean 'msg'?"
    assert not (tmp_path / ".shinobi").exists()  # refused before anything ran


def test_an_unknown_input_with_no_near_miss_lists_the_inputs(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        run_recipe(_pipe(), {"zzz": 1}, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == "recipe 'pipe' has no input 'zzz' (its inputs: msg, count)"


def test_names_and_aliases_are_all_taken(tmp_path: Path) -> None:
    for given in ({"nMax": 2, "imsize": 3}, {"n_max": 2, "size": 3}):
        assert run_recipe(_pipe(Aliased), given, cwd=tmp_path, use_cache=False).ok


def test_a_model_that_allows_extra_keys_takes_any(tmp_path: Path) -> None:
    assert run_recipe(_pipe(Loose), {"other": 1}, cwd=tmp_path, use_cache=False).ok
