"""A ``default_factory`` that takes the other inputs, or that fails, is the run's to call.

Declaring a cab or a recipe called every factory with no argument to learn its
default: one that takes the validated data (pydantic's ``lambda data: ...``)
made the recipe file fail to import, and one that reads an unset variable made
the dry run, the run and ``ninja graph`` an internal error, even when the input
was given and pydantic would never call it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class FromPrefix(BaseModel):
    prefix: str = "img"
    out: File = Field(default_factory=lambda data: Path(data["prefix"] + ".fits"))


class FromScratch(BaseModel):
    out: File = Field(default_factory=lambda: Path(os.environ["NO_SUCH_SCRATCH"]) / "x")


class Made(BaseModel):
    out: File | None = None


def _touch(inputs: type[BaseModel]) -> Cab:
    meta = {"prefix": ParamMeta(skip=True), "out": ParamMeta(positional=True)}
    return Cab(
        "touch", "touch", inputs, Made, {k: v for k, v in meta.items() if k in inputs.model_fields}
    )


def test_a_cab_whose_factory_takes_the_other_inputs_runs_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_recipe(_touch(FromPrefix), {"prefix": "zz"}, use_cache=False)
    assert result.ok, result.error
    assert (tmp_path / "zz.fits").exists()


def test_a_factory_that_fails_is_not_called_when_the_input_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_SUCH_SCRATCH", raising=False)
    recipe = Recipe("r", FromScratch, Made)
    recipe.add_step("t", _touch(FromScratch), out=recipe.inputs.out)
    recipe.set_output("out", recipe.outputs.t.out)
    result = run_recipe(recipe, {"out": "given.txt"}, use_cache=False)
    assert result.ok, result.error
    assert (tmp_path / "given.txt").exists()
