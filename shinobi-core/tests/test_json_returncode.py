"""A step refused before any process ran has no exit status (``returncode`` None).

A scatter whose lists differ in length at run time, or an input its model
refuses, failed with ``returncode: 0`` in ``--json`` and the manifest, which
scripts read as "the tool ran and exited 0"; a pystep that raised already
gave None.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

import shinobi
from shinobi.runner import run_recipe
from shinobi.steps import Recipe
from shinobi.steps.result import StepResult


@shinobi.pystep
def mk(n: int) -> list[int]:
    return list(range(n))


@shinobi.pystep
def add(a: int, b: str) -> str:
    return f"{a}-{b}"


@shinobi.pystep
def half(n: int | str) -> int:  # a union: only the run refuses a list
    return int(n) // 2


class In(BaseModel):
    n: int = 3
    names: list[str] = ["x", "y"]


class Out(BaseModel):
    pass


def _step(recipe: Recipe, name: str, tmp_path: Path) -> StepResult:
    (tmp_path / "w").mkdir()
    result = run_recipe(recipe, workdir=tmp_path / "w", cwd=tmp_path, use_cache=False)
    return next(s for s in result.steps if s.name == name)


def test_a_scatter_length_mismatch_at_run_time_has_no_returncode(tmp_path: Path) -> None:
    recipe = Recipe("r", In, Out)
    recipe.add_step("mk", mk, n=recipe.inputs.n)
    recipe.add_step(
        "add", add, scatter=["a", "b"], a=recipe.outputs.mk.result, b=recipe.inputs.names
    )
    step = _step(recipe, "add", tmp_path)
    assert step.status == "failed" and "same length" in (step.error or "")
    assert step.returncode is None


def test_an_input_refused_at_run_time_has_no_returncode(tmp_path: Path) -> None:
    recipe = Recipe("r", In, Out)
    recipe.add_step("mk", mk, n=recipe.inputs.n)
    recipe.add_step("half", half, n=recipe.outputs.mk.result)  # a list where an int goes
    step = _step(recipe, "half", tmp_path)
    assert step.status == "failed" and step.returncode is None
