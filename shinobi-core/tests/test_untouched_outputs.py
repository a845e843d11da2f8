"""A step that exits 0 without rewriting the output an earlier run left is warned
about, and its result is not cached: the next step would take that old file for
this run's product."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe, StepResult


class ShIn(BaseModel):
    script: str
    out: File


class ShOut(BaseModel):
    out: File


SH = Cab(
    "sh",
    "sh -c",
    ShIn,
    ShOut,
    {"script": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
)


def _run(tmp_path: Path, script: str, cache: bool = False) -> StepResult:
    recipe = Recipe("r", ShIn, ShOut)
    recipe.add_step("make", SH, script=recipe.inputs.script, out=recipe.inputs.out)
    inputs = {"script": script, "out": "product.txt"}
    return run_recipe(recipe, inputs, cwd=tmp_path, use_cache=cache).steps[0]


def _an_earlier_product(tmp_path: Path) -> Path:
    product = tmp_path / "product.txt"
    product.write_text("yesterday's\n")
    old = time.time() - 3600
    os.utime(product, (old, old))
    time.sleep(0.1)  # its ctime too must be clearly older than the step
    return product


def test_a_step_that_leaves_an_earlier_output_untouched_is_warned_about(tmp_path: Path) -> None:
    _an_earlier_product(tmp_path)
    result = _run(tmp_path, "true")
    assert result.status == "ok"
    (warning,) = result.warnings
    assert "did not rewrite its output" in warning and "product.txt" in warning


def test_a_step_that_rewrites_its_output_is_not(tmp_path: Path) -> None:
    _an_earlier_product(tmp_path)
    result = _run(tmp_path, 'echo today > "$0"')
    assert result.status == "ok" and result.warnings == []


def test_an_untouched_output_is_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / "cache"))
    _an_earlier_product(tmp_path)
    assert _run(tmp_path, "true", cache=True).status == "ok"
    again = _run(tmp_path, "true", cache=True)
    assert again.status == "ok", "ran again: the quiet result was not stored"
