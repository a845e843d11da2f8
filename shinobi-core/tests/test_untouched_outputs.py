"""A step that exits 0 without rewriting the output an earlier run left is warned
about, and its result is not cached: the next step would take that old file for
this run's product."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import create_model

from shinobi.runner import run_recipe
from shinobi.steps import MS, Cab, File, ParamMeta, Recipe, StepResult


def _run(
    tmp_path: Path,
    script: str,
    *,
    out: str = "product.txt",
    kind: Any = File,
    optional: bool = False,
    cache: bool = False,
) -> StepResult:
    """``sh -c SCRIPT OUT``, with OUT a declared output of type ``kind``."""
    inputs_model = create_model("ShIn", script=(str, ...), out=(kind, ...))
    declared = (kind | None, None) if optional else (kind, ...)
    outputs_model = create_model("ShOut", out=declared)
    positional = {"script": ParamMeta(positional=True), "out": ParamMeta(positional=True)}
    sh = Cab("sh", "sh -c", inputs_model, outputs_model, positional)
    recipe = Recipe("r", inputs_model)
    recipe.add_step("make", sh, script=recipe.inputs.script, out=recipe.inputs.out)
    inputs = {"script": script, "out": out}
    return run_recipe(recipe, inputs, cwd=tmp_path, use_cache=cache).steps[0]


def _age(*paths: Path) -> None:
    """Make ``paths`` an earlier run's: an hour old, their ctimes clearly before the step."""
    old = time.time() - 3600
    for path in paths:
        os.utime(path, (old, old))
    time.sleep(0.1)  # ctime cannot be set back: it must fall well before the step starts


def _an_earlier_product(tmp_path: Path) -> Path:
    product = tmp_path / "product.txt"
    product.write_text("yesterday's\n")
    _age(product)
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
def _run_ms(tmp_path: Path, script: str) -> StepResult:
    return _run(tmp_path, script, out="obs.ms", kind=MS)


def _an_earlier_ms(tmp_path: Path) -> Path:
    ms = tmp_path / "obs.ms"
    (ms / "ANTENNA").mkdir(parents=True)
    (ms / "table.dat").write_text("yesterday's visibilities\n")
    (ms / "ANTENNA" / "table.dat").write_text("yesterday's antennas\n")
    _age(ms / "ANTENNA" / "table.dat", ms / "table.dat", ms / "ANTENNA", ms)
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


def test_an_optional_output_left_as_an_earlier_run_left_it_draws_no_warning(
    tmp_path: Path,
) -> None:
    """A step may make an optional product or not (a loop's until flag, most iterations)."""
    _an_earlier_product(tmp_path)
    result = _run(tmp_path, "true", optional=True)
    assert result.status == "ok" and result.warnings == [], result.warnings


# -- an output that is a symbolic link: a data set exposed under a new name --------
def _an_earlier_link(tmp_path: Path) -> Path:
    ms = _an_earlier_ms(tmp_path)
    view = tmp_path / "view.ms"
    view.symlink_to(ms)
    old = time.time() - 3600
    os.utime(view, (old, old), follow_symlinks=False)
    time.sleep(0.1)
    return view


@pytest.mark.parametrize(
    ("script", "warned"),
    [
        ('rm -f "$0" && ln -s obs.ms "$0"', False),  # the link made again: the tool's work
        ('echo today > "$0/table.dat"', False),  # written through the link
        ("true", True),  # nothing done: still the quiet failure it was
    ],
    ids=["relinked", "through-link", "untouched"],
)
def test_a_link_output_is_untouched_only_when_neither_it_nor_its_target_changed(
    tmp_path: Path, script: str, warned: bool
) -> None:
    _an_earlier_link(tmp_path)
    result = _run(tmp_path, script, out="view.ms", kind=MS)
    assert result.status == "ok"
    assert bool(result.warnings) is warned, result.warnings


def test_a_mutable_input_a_step_leaves_as_it_was_draws_no_warning(tmp_path: Path) -> None:
    """It is noted before the step (for a step that fails or is stopped), but a
    step that exits 0 without rewriting the data it may rewrite did its job."""
    ms = _an_earlier_ms(tmp_path)
    inputs_model = create_model("VisIn", vis=(MS, ...))
    meta = {"vis": ParamMeta(positional=True, mutable=True)}
    flag = Cab("flag", ["/bin/sh", "-c", "true"], inputs_model, create_model("VisOut"), meta)
    recipe = Recipe("r")
    recipe.add_step("flag", flag, vis=str(ms))
    (step,) = run_recipe(recipe, {}, cwd=tmp_path).steps
    assert step.status == "ok" and step.warnings == [], step.warnings
