"""A pystep on the venv backend with no venv declared runs in this process: the
warning saying so was missing from ``--dryrun`` (cabs had theirs), and a run
said it once per scatter slice (a thousand lines for a thousand slices). It is
now said before the run, in a dry run too, once per step. A scatter of cabs was
named slice by slice (``'big[0]', 'big[1]' ... and 49 more``), and cabs and
pysteps were two lines: one line now names each step once, cab or pystep."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel

import shinobi
from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe

RECIPE = """
from pydantic import BaseModel
import shinobi
from shinobi.steps import Recipe

@shinobi.pystep
def sq(i: int) -> int:
    return i * i

class I(BaseModel):
    xs: list[int] = list(range(7))

class O(BaseModel):
    ys: list[int]

r = Recipe("r", I, O)
r.add_step("sq", sq, scatter=["i"], i=r.inputs.xs)
r.set_output("ys", r.outputs.sq.result)
"""


@shinobi.pystep
def sq(i: int) -> int:
    return i * i


@shinobi.pystep
def upto(n: int) -> list[int]:
    return list(range(n))


class In(BaseModel):
    xs: list[int] = list(range(7))
    n: int = 6


class Out(BaseModel):
    pass


@pytest.fixture(autouse=True)
def _no_venv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("SHINOBI_BACKEND_VENV", raising=False)


def _no_venv_warnings(recipe: Recipe, tmp_path: Path) -> list[str]:
    config = load_config({"cache.enabled": False})
    result = run_recipe(recipe, backend="venv", cwd=tmp_path, config=config)
    assert result.ok, result.error
    return [w for w in result.warnings if "no venv is declared" in w]


def test_a_scattered_pystep_is_warned_of_once(tmp_path: Path) -> None:
    recipe = Recipe("r", In, Out)
    recipe.add_step("sq", sq, scatter=["i"], i=recipe.inputs.xs)
    assert _no_venv_warnings(recipe, tmp_path) == [
        "step 'sq' selected the venv backend but no venv is declared (venv= on the pystep,"
        " or backend.venv); it runs in this process"
    ]


def test_a_pystep_scattered_over_what_a_step_makes_is_warned_of_once(tmp_path: Path) -> None:
    recipe = Recipe("r", In, Out)
    recipe.add_step("upto", upto, n=recipe.inputs.n)
    recipe.add_step("sq", sq, scatter=["i"], i=recipe.outputs.upto.result)
    (said,) = _no_venv_warnings(recipe, tmp_path)
    assert said.startswith("steps 'upto', 'sq' selected the venv backend") and "they run" in said


def test_a_dry_run_warns_of_pysteps_as_the_run_does(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
) -> None:
    recipe_file(RECIPE)
    done = ninja("run", "recipe.py:r", "--backend", "venv", "--dryrun", "--json")
    assert done.returncode == 0, done.stderr
    warning = (
        "step 'sq' selected the venv backend but no venv is declared (venv= on the pystep,"
        " or backend.venv); it runs in this process"
    )
    assert json.loads(done.stdout)["warnings"] == [warning]
    assert done.stderr.count("no venv is declared") == 1


class Slice(BaseModel):
    i: int


echo = Cab(
    name="echo",
    command="/bin/echo",
    inputs_model=Slice,
    outputs_model=Out,
    field_meta={"i": ParamMeta(positional=True)},
)


def test_scattered_cabs_and_pysteps_are_warned_of_on_one_line_naming_each_step_once(
    tmp_path: Path,
) -> None:
    recipe = Recipe("r", In, Out)
    recipe.add_step("big", echo, scatter=["i"], i=recipe.inputs.xs)
    recipe.add_step("sq", sq, scatter=["i"], i=recipe.inputs.xs)
    assert _no_venv_warnings(recipe, tmp_path) == [
        "steps 'big', 'sq' selected the venv backend but no venv is declared (venv= on the"
        " step or pystep, or backend.venv in the configuration); running natively (a pystep:"
        " in this process)"
    ]
