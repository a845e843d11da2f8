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
from shinobi.steps import MS, Cab, File, ParamMeta, Recipe, StepResult


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


# -- a directory output: a Measurement Set ------------------------------------------
class MsIn(BaseModel):
    script: str
    out: MS


class MsOut(BaseModel):
    out: MS


MS_SH = Cab(
    "sh",
    "sh -c",
    MsIn,
    MsOut,
    {"script": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
)


def _run_ms(tmp_path: Path, script: str) -> StepResult:
    recipe = Recipe("r", MsIn, MsOut)
    recipe.add_step("make", MS_SH, script=recipe.inputs.script, out=recipe.inputs.out)
    inputs = {"script": script, "out": "obs.ms"}
    return run_recipe(recipe, inputs, cwd=tmp_path, use_cache=False).steps[0]


def _an_earlier_ms(tmp_path: Path) -> Path:
    ms = tmp_path / "obs.ms"
    (ms / "ANTENNA").mkdir(parents=True)
    (ms / "table.dat").write_text("yesterday's visibilities\n")
    (ms / "ANTENNA" / "table.dat").write_text("yesterday's antennas\n")
    old = time.time() - 3600
    for path in (ms / "ANTENNA" / "table.dat", ms / "table.dat", ms / "ANTENNA", ms):
        os.utime(path, (old, old))
    time.sleep(0.1)  # their ctimes too must be clearly older than the step
    return ms


def test_a_step_that_leaves_an_earlier_measurement_set_untouched_is_warned_about(
    tmp_path: Path,
) -> None:
    _an_earlier_ms(tmp_path)
    result = _run_ms(tmp_path, "true")
    assert result.status == "ok"
    (warning,) = result.warnings
    assert "did not rewrite its output" in warning and "obs.ms" in warning


@pytest.mark.parametrize(
    "script",
    [
        'echo today > "$0/table.dat"',  # a file rewritten in place: the directory's times stay
        'echo today >> "$0/ANTENNA/table.dat"',  # one level down
        'touch "$0/ANTENNA/table.lock"',  # a new entry, deeper down
        'rm -r "$0" && mkdir "$0"',  # made again from nothing
    ],
    ids=["file", "nested-file", "new-entry", "remade"],
)
def test_a_step_that_rewrites_anything_in_its_measurement_set_is_not(
    tmp_path: Path, script: str
) -> None:
    _an_earlier_ms(tmp_path)
    result = _run_ms(tmp_path, script)
    assert result.status == "ok" and result.warnings == [], result.warnings


def test_a_directory_too_big_to_walk_twice_is_not_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shinobi.untouched_outputs.MAX_ENTRIES", 2)
    _an_earlier_ms(tmp_path)
    assert _run_ms(tmp_path, "true").warnings == []
