"""A process a step left running that opens the step's output only after the
step's command exited (it did not hold it at exit) was missed: the step was
done, the next step copied the unfinished file and the cache kept it, unsaid.

Now the leftovers are watched for up to ``SETTLE`` seconds: one that opens an
output in that time is waited for (and fails the step if it goes on writing),
and leftovers still running after it make the step warn and stay out of the
cache. Each leftover here ends on a flag file, so nothing outlives its test.
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
from shinobi.steps.result import RecipeResult

#: Waits (in the background, holding nothing of the step's) until "$0.go"
#: appears, at most ~10 s; the shell then runs what follows.
_UNTIL_GO = '(i=0; while [ ! -e "$0.go" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done'


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
    cache=True,
)
CAT = Cab(
    name="cat",
    command="cat",
    inputs_model=CatIn,
    outputs_model=CatOut,
    field_meta={"src": ParamMeta(positional=True)},
)


def _run(tmp_path: Path, script: str, out: Path) -> RecipeResult:
    # "sh -c SCRIPT OUT" runs SCRIPT with $0 = OUT
    recipe = Recipe("pipe", ShIn, CatOut)
    recipe.add_step("make", SH, script=recipe.inputs.script, out=recipe.inputs.out)
    recipe.add_step("use", CAT, src=recipe.outputs.make.out)
    inputs = {"script": script, "out": str(out)}
    return run_recipe(recipe, inputs, backend="native", cwd=tmp_path, workdir=tmp_path)


@pytest.fixture
def out(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "product.txt"
    yield path
    (tmp_path / "product.txt.go").touch()  # let any leftover finish
    time.sleep(0.2)


def test_a_leftover_that_opens_the_output_late_and_goes_on_writing_fails_the_step(
    tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "SETTLE", 0.8)
    # not open at exit: the leftover opens the output 0.2 s later, and holds it
    script = 'echo first > "$0"; (sleep 0.2; exec 3>>"$0"; ' + _UNTIL_GO + "; echo late >&3)"
    script += ") >/dev/null 2>&1 &"
    result = _run(tmp_path, script, out)
    steps = {s.name: s for s in result.steps}
    make = steps["make"]
    assert make.status == "failed", (make.status, make.error)
    assert "still writing its output" in (make.error or "")
    assert "use" not in steps or steps["use"].status != "ok"


def test_a_leftover_that_appends_late_is_waited_for(
    tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The leftover is gone within 0.3 s: the run waits only that long, so a
    # settle time far above it costs nothing and a loaded machine cannot fail it.
    monkeypatch.setattr(process, "SETTLE", 10.0)
    script = 'echo first > "$0"; (sleep 0.3; echo late >> "$0") >/dev/null 2>&1 &'
    result = _run(tmp_path, script, out)
    make, use = result.steps
    assert make.status == "ok", make.error
    assert use.stdout == "first\nlate\n"  # the finished product, not the first line alone
    assert not make.warnings


def test_a_leftover_still_running_is_warned_of_and_not_cached(
    tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "SETTLE", 0.3)
    # it could write the output any time; this one ends without doing so, so
    # the output is as the step left it and a cached result would be a hit
    script = 'echo first > "$0"; ' + _UNTIL_GO + ") >/dev/null 2>&1 &"
    first = _run(tmp_path, script, out).steps[0]
    assert first.status == "ok", first.error
    (warning,) = first.warnings
    assert warning.startswith("it left pid ") and "running, which may still change" in warning
    assert "make the step wait for what it starts" in warning
    again = _run(tmp_path, script, out).steps[0]
    assert again.status == "ok", again.status  # run again: the first result was not cached


def test_a_leftover_that_only_reads_the_output_does_not_fail_the_step(
    tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A viewer or checker the step starts in the background reads the product and
    changes nothing. Taken for a writer, it failed a step whose output was finished
    ("still writing its output"), and the next step never ran."""
    monkeypatch.setattr(process, "SETTLE", 0.3)
    # the step's shell opens the output for reading before it starts the leftover,
    # so the leftover holds it from the moment the step exits until the flag file
    script = 'echo first > "$0"; exec 3<"$0"; ' + _UNTIL_GO + ") >/dev/null 2>&1 &"
    steps = {s.name: s for s in _run(tmp_path, script, out).steps}
    make = steps["make"]
    assert make.status == "ok", make.error
    assert steps["use"].stdout == "first\n"
    (warning,) = make.warnings  # still running: warned of, as any leftover is
    assert warning.startswith("it left pid ") and "running, which may still change" in warning
