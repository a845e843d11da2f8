"""A step whose command exits 0 while a process it left running still writes its
output has not finished: it fails, is not cached, and the next step never reads
the half-written product.

The leftover writers are real background processes of the step's shell; each
test lets them finish (a flag file) so nothing outlives it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.backends import process
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe

# The background writer holds "$0" open for writing until "$0.go" appears
# (at most ~10 s), then adds its second half.
LEFT_WRITING = (
    '(exec > "$0"; echo part; i=0; while [ ! -e "$0.go" ] && [ $i -lt 200 ]; do'
    " sleep 0.05; i=$((i+1)); done; echo rest) &"
    # the step ends only once the writer holds the file, however loaded the machine
    ' while [ ! -s "$0" ]; do sleep 0.01; done'
)


class ShIn(BaseModel):
    script: str
    out: File


class ShOut(BaseModel):
    out: File


class CatIn(BaseModel):
    src: File


class CatOut(BaseModel):
    pass


SH = Cab(
    name="sh",
    command="sh -c",
    inputs_model=ShIn,
    outputs_model=ShOut,
    field_meta={"script": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
)
CAT = Cab(
    name="cat",
    command="cat",
    inputs_model=CatIn,
    outputs_model=CatOut,
    field_meta={"src": ParamMeta(positional=True)},
)


def _recipe() -> Recipe:
    # "sh -c SCRIPT OUT" runs SCRIPT with $0 = OUT
    recipe = Recipe("pipe", ShIn, CatOut)
    recipe.add_step("make", SH, script=recipe.inputs.script, out=recipe.inputs.out)
    recipe.add_step("use", CAT, src=recipe.outputs.make.out)
    return recipe


@pytest.fixture
def out(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "product.txt"
    yield path
    (tmp_path / "product.txt.go").touch()  # let any leftover writer finish
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "rest" not in _text(path):
        time.sleep(0.05)


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def _run(tmp_path: Path, script: str, out: Path) -> object:
    return run_recipe(
        _recipe(),
        {"script": script, "out": str(out)},
        backend="native",
        cwd=tmp_path,
        workdir=tmp_path,
    )


@pytest.fixture(autouse=True)
def _short_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "SETTLE", 0.3)


def test_a_step_that_leaves_its_output_being_written_fails(tmp_path: Path, out: Path) -> None:
    result = _run(tmp_path, LEFT_WRITING, out)
    steps = {s.name: s for s in result.steps}  # type: ignore[attr-defined]
    make = steps["make"]
    assert make.status == "failed", (make.status, make.error)
    assert "still writing its output" in make.error and str(out) in make.error
    assert "use" not in steps or steps["use"].status != "ok"  # the half product unread
    (tmp_path / "product.txt.go").touch()
    deadline = time.monotonic() + 10
    while "rest" not in _text(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    again = _run(tmp_path, LEFT_WRITING, out)  # not taken from the cache
    assert again.steps[0].status != "cached"  # type: ignore[attr-defined]


def test_a_writer_that_finishes_within_the_settle_time_is_fine(
    tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run waits only until the writer is done, so a settle time far above
    # the writer's 0.1 s costs nothing here, and a loaded machine that takes
    # longer than the other tests' 0.3 s to run the writer's subshell cannot
    # fail it.
    monkeypatch.setattr(process, "SETTLE", 10.0)
    script = '(exec > "$0"; echo part; sleep 0.1; echo rest) &'
    result = _run(tmp_path, script, out)
    make, use = result.steps  # type: ignore[attr-defined]
    assert make.status == "ok", make.error
    assert use.stdout == "part\nrest\n"


def test_a_background_process_that_does_not_hold_the_output_is_fine(
    tmp_path: Path, out: Path
) -> None:
    script = 'echo whole > "$0"; (i=0; while [ ! -e "$0.go" ] && [ $i -lt 200 ]; do sleep 0.05;'
    script += ' i=$((i+1)); done; echo rest >> "$0") >/dev/null 2>&1 &'
    result = _run(tmp_path, script, out)
    make, use = result.steps  # type: ignore[attr-defined]
    assert make.status == "ok", make.error
    assert use.stdout == "whole\n"
