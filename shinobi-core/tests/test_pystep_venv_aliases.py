"""A pystep in a venv gets a model input with aliased fields as it was given.

ninja sends the values it validated as JSON keyed by field name, and the
runner in the venv validated them by alias only: a model without
``populate_by_name`` dropped them for its defaults, and the step computed
with ``sol_int=10`` where 20 was given, exit 0, natively right."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from test_venv_fixtures import made_venv

__all__ = ["made_venv"]

RECIPE = """
from pydantic import BaseModel, Field

import shinobi


class Solve(BaseModel):
    sol_int: int = Field(10, alias="solInt")
    ref_ant: str = Field("m000", alias="refAnt")


@shinobi.pystep
def native(solve: Solve = Solve()) -> str:
    return f"{{solve.sol_int}} {{solve.ref_ant}}"


@shinobi.pystep(venv={venv!r})
def in_venv(solve: Solve = Solve()) -> str:
    return f"{{solve.sol_int}} {{solve.ref_ant}}"
"""


@pytest.mark.parametrize("target", ["native", "in_venv"])
def test_aliased_fields_reach_the_function_whatever_runs_it(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    made_venv: Path,
    target: str,
) -> None:
    recipe_file(RECIPE.format(venv=str(made_venv)))
    for given in ('{"sol_int": 20, "ref_ant": "m001"}', '{"solInt": 20, "refAnt": "m001"}'):
        done = ninja("run", f"recipe.py:{target}", "--solve", given, "--json", "--no-cache")
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout)["outputs"]["result"] == "20 m001", given
