"""What a Python caller of run_recipe meets: errors that pickle, one-line refusals.

shinobi's errors cross a process pool as themselves.

A pool hands a worker's exception back pickled, and Python rebuilt one by
calling its class with the message: ``InputError`` (every wrong-type input)
and ``Interrupted`` take other arguments, so the pool broke
(``BrokenProcessPool``) instead of raising the one-line error.
"""

from __future__ import annotations

import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi.errors import InputError
from shinobi.runner import Interrupted, run_recipe
from shinobi.steps import Recipe
from shinobi.steps.result import RecipeResult


class In(BaseModel):
    count: int


def _refused_input() -> None:
    run_recipe(Recipe("r", In), {"count": "lots"})


def test_an_input_error_raised_in_a_pool_reaches_its_caller() -> None:
    with ProcessPoolExecutor(1) as pool, pytest.raises(InputError) as raised:
        pool.submit(_refused_input).result()
    assert raised.value.field == "count"
    assert str(raised.value).startswith("recipe 'r', input 'count':")


@pytest.mark.parametrize(
    "error",
    [
        InputError("r", "count", "not an int"),
        Interrupted(2, RecipeResult(name="r", status="cancelled"), ()),
    ],
)
def test_errors_keep_their_message_and_attributes_pickled(error: Any) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert str(again) == str(error)
    assert again.__dict__.keys() == error.__dict__.keys()
    assert again.exit_code == error.exit_code


@pytest.mark.parametrize("given", ["r.py:r", None, object()])
def test_run_recipe_refuses_what_is_no_recipe_in_one_line(given: Any) -> None:
    """A recipe's name as a string failed with an AttributeError from deep inside."""
    from shinobi.errors import CallRefused

    with pytest.raises(CallRefused) as raised:
        run_recipe(given)
    assert str(raised.value).startswith("run_recipe was given a")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("where", ["cwd", "workdir"])
def test_a_folder_that_is_not_there_is_refused_not_made(tmp_path: Path, where: str) -> None:
    """A typo in cwd= or workdir= made the whole tree and ran the tools there."""
    from shinobi.errors import UsageError
    from shinobi.steps import Cab

    recipe = Recipe("r")
    recipe.add_step("t", Cab("t", ["touch", "made"]))
    typo = tmp_path / "typo" / "deeper"
    with pytest.raises(UsageError) as raised:
        run_recipe(recipe, **{where: typo})
    assert (
        str(raised.value)
        == f"{where}={str(typo)!r} does not exist: create it first, or fix the path"
    )
    assert not (tmp_path / "typo").exists()
