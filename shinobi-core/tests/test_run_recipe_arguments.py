"""``run_recipe`` as a script calls it: each misuse is one clear error, and ``cwd=``
is the project the run belongs to.

Found by an audit of the Python API: ``config={"execution": ...}`` and
``observers=progress`` surfaced as a raw AttributeError or TypeError deep in
ninja, ``use_cache="no"`` used the cache, an observer without ``step_started``
failed every step as an "internal error", the recipe's own inputs model
instance was refused as unknown keys, ``cwd=X`` read the caller's
``shinobi.toml``, and two in-process pysteps at once failed each other for a
working directory the other had changed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import shinobi
from shinobi.config import load_config
from shinobi.errors import BackendNotFound, UsageError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class Say(BaseModel):
    msg: str = "hi"


echo = Cab("echo", ["echo"], Say, None, {"msg": ParamMeta(positional=True)})


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_CONFIG", os.devnull)


class Half:
    """An observer that wants only the finishes."""

    def step_finished(self, result: Any) -> None:
        del result


@pytest.mark.parametrize(
    ("arguments", "error", "said"),
    [
        ({"config": {"execution": {}}}, TypeError, "run_recipe(config=...) takes an AppConfig"),
        ({"observers": print}, TypeError, "takes a list of observers, not builtin_function"),
        ({"observers": [Half()]}, TypeError, "observer Half has no step_started, warning"),
        ({"use_cache": "no"}, TypeError, "run_recipe(use_cache=...) takes True, False or None"),
        ({"provenance": 1}, TypeError, "run_recipe(provenance=...) takes True, False or None"),
        ({"cwd": 5}, TypeError, "run_recipe(cwd=...) takes a path (str or pathlib.Path), not int"),
        ({"inputs": "msg"}, UsageError, "the inputs must be a mapping of input names to values"),
    ],
)
def test_a_misused_argument_is_one_clear_error(
    arguments: dict[str, Any], error: type[Exception], said: str
) -> None:
    with pytest.raises(error) as info:
        run_recipe(echo, **arguments)
    assert said in str(info.value)


def test_max_workers_the_setting_refuses_is_refused_with_a_config_too() -> None:
    with pytest.raises(UsageError, match=r"run_recipe\(max_workers=0\): Input should be"):
        run_recipe(echo, config=load_config(), max_workers=0)


def test_the_recipes_own_inputs_model_instance_gives_its_inputs() -> None:
    result = run_recipe(echo, Say(msg="from the model"), use_cache=False)
    assert result.ok, result.error
    assert result.steps[0].stdout == "from the model\n"


def test_cwd_reads_the_project_file_of_the_directory_the_steps_run_in(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "shinobi.toml").write_text('[backend]\ndefault = "nope"\n')
    with pytest.raises(BackendNotFound, match="from project file"):
        run_recipe(echo, cwd=project)
    assert run_recipe(echo, use_cache=False).ok  # here, no such file
    assert load_config(cwd="proj").backend.default == "nope"  # a str for cwd= too


@shinobi.pystep
def detour(tag: str) -> str:
    """Works in a folder of its own for a moment, and comes back."""
    os.chdir("sub")
    time.sleep(0.6)
    with open("note.txt", "w") as made:
        made.write(tag)
    os.chdir("..")
    return tag


@shinobi.pystep
def quick(tag: str) -> str:
    time.sleep(0.2)
    return tag


def test_two_pysteps_at_once_do_not_fail_each_other_for_the_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    recipe = Recipe("race", max_workers=2)
    recipe.add_step("a", detour, tag="a")
    recipe.add_step("b", quick, tag="b")
    result = run_recipe(recipe, use_cache=False)
    assert result.ok, result.error
    assert (tmp_path / "sub" / "note.txt").read_text() == "a"  # where the function put it
    assert not (tmp_path / "note.txt").exists()
    assert Path.cwd() == tmp_path
