"""A pystep-bodied loop took a flag an earlier run left for its own.

A loop handed its until path (``done="done.flag"``) notes the file before its
first cycle, and a flag still as it was then does not end the loop. A Cab body
passing the path through was judged so; a pystep returning the path it was
handed was judged by the file being there, so the recipe's second run stopped
after cycle 1 with the wrong result, exit 0 and no warning.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel

import shinobi
from shinobi import Recipe
from shinobi.runner import run_recipe
from shinobi.steps import File
from shinobi.steps.result import RecipeResult

Ninja = Callable[..., subprocess.CompletedProcess[str]]

# -- the auditor's reproduction -------------------------------------------------

RECIPE = """
from pathlib import Path
import pytest
from pydantic import BaseModel
import shinobi
from shinobi import Recipe
from shinobi.steps import File

class LOut(BaseModel):
    value: int = 0
    done: File | None = None

@shinobi.pystep
def bump(value: int, done: File, cycle: int = 0) -> LOut:
    v = value + 1
    if v >= 3:                      # converges at cycle 3
        Path(done).write_text("x")
    return LOut(value=v, done=done)

class RIn(BaseModel):
    start: int = 0
class ROut(BaseModel):
    final: int | None = None

r = Recipe("loop", RIn, ROut)
loop = r.add_loop("L", bump, max_iter=5, until="done", carry={"value": "value"},
                  index_input="cycle", value=r.inputs.start, done="done.flag")
r.set_output("final", loop.outputs.value)
"""


def test_the_second_run_of_a_pystep_loop_runs_to_its_own_flag(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    recipe_file(RECIPE)
    for _ in range(2):  # the second run finds the first one's done.flag
        done = ninja("run", "recipe.py:r")
        assert done.returncode == 0, done.stderr
        assert "final = 3" in done.stdout, done.stdout + done.stderr
        assert "skipped   L.3" not in done.stdout + done.stderr


# -- variants, through the API --------------------------------------------------


class Out(BaseModel):
    value: int = 0
    done: File | None = None


class In(BaseModel):
    start: int = 0
    need: int = 3


class Final(BaseModel):
    final: int | None = None


@shinobi.pystep
def returns_it(value: int, done: File, need: int, cycle: int = 0) -> Out:
    """Always returns the path it was handed; writes it once ``need`` is reached."""
    if value + 1 >= need:
        Path(done).write_text("x")
    return Out(value=value + 1, done=done)


@shinobi.pystep
def returns_it_when_written(value: int, done: File, need: int, cycle: int = 0) -> Out:
    """Returns the path it was handed only in the cycle that writes it."""
    if value + 1 >= need:
        Path(done).write_text("x")
        return Out(value=value + 1, done=done)
    return Out(value=value + 1)


def looped(body: object, max_iter: int = 5, done: str | None = "done.flag") -> Recipe:
    """A loop of ``body`` until its output ``done``, handed the path ``done``; with
    ``done`` None the body names its flag itself, and only it knows the path."""
    handed = {} if done is None else {"done": done}
    recipe = Recipe("loop", In, Final)
    loop = recipe.add_loop(
        "L",
        body,
        max_iter=max_iter,
        until="done",
        carry={"value": "value"},
        index_input="cycle",
        value=recipe.inputs.start,
        need=recipe.inputs.need,
        **handed,
    )
    recipe.set_output("final", loop.outputs.value)
    return recipe


def run(recipe: Recipe, tmp_path: Path, **inputs: int) -> RecipeResult:
    result = run_recipe(recipe, inputs, cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    return result


def skipped(result: RecipeResult) -> list[str]:
    return [s.name for s in result.steps if s.status == "skipped"]


def test_a_pystep_returning_the_handed_flag_ignores_an_old_one(tmp_path: Path) -> None:
    (tmp_path / "done.flag").write_text("yesterday")
    result = run(looped(returns_it), tmp_path)
    assert result.outputs["final"] == 3
    assert skipped(result) == ["L.4", "L.5"]
    assert not any("without converging" in w for w in result.warnings), result.warnings


def test_a_pystep_that_writes_the_flag_in_the_run_still_stops_there(tmp_path: Path) -> None:
    for body in (returns_it, returns_it_when_written):
        (tmp_path / "done.flag").unlink(missing_ok=True)
        for _ in range(2):  # a clean start, then the flag the first run left
            result = run(looped(body), tmp_path)
            assert result.outputs["final"] == 3, body
            assert skipped(result) == ["L.4", "L.5"], body


def test_an_old_flag_never_rewritten_runs_every_cycle_and_warns(tmp_path: Path) -> None:
    (tmp_path / "done.flag").write_text("yesterday")
    result = run(looped(returns_it), tmp_path, need=99)
    assert result.outputs["final"] == 5
    assert skipped(result) == []
    assert any("ran all 5 iterations without converging" in w for w in result.warnings), (
        result.warnings
    )


# -- a Recipe body: one pystep writes the flag, another returns it --------------


class Value(BaseModel):
    value: int = 0


@shinobi.pystep
def writes(value: int, done: File, need: int, cycle: int = 0) -> Value:
    if value + 1 >= need:
        Path(done).write_text("x")
    return Value(value=value + 1)


@shinobi.pystep
def reports(value: int, done: File) -> Out:
    return Out(value=value, done=done)


class BodyIn(BaseModel):
    value: int = 0
    need: int = 3
    done: File
    cycle: int = 0


def test_a_recipe_body_returning_the_handed_flag_from_a_pystep(tmp_path: Path) -> None:
    body = Recipe("body", BodyIn, Out)
    body.add_step(
        "w",
        writes,
        value=body.inputs.value,
        need=body.inputs.need,
        done=body.inputs.done,
        cycle=body.inputs.cycle,
    )
    body.add_step("r", reports, value=body.outputs.w.value, done=body.inputs.done)
    body.set_output("value", body.outputs.r.value)
    body.set_output("done", body.outputs.r.done)
    for _ in range(2):
        result = run(looped(body), tmp_path)
        assert result.outputs["final"] == 3
        assert [s for s in skipped(result) if s.endswith(".w")] == ["L.4.w", "L.5.w"]


# -- a scattered recipe holding the loop ------------------------------------------


class Slice(BaseModel):
    flag: File
    need: int


class Slices(BaseModel):
    flags: list[File]
    needs: list[int]


@shinobi.pystep
def logged(value: int, done: File, need: int, cycle: int = 0) -> Out:
    """:func:`returns_it`, writing its flag and cycle to ``log`` (in ``done``'s directory)."""
    with open(Path(done).with_name("log"), "a") as log:
        log.write(f"{Path(done).name} {cycle}\n")
    if value + 1 >= need:
        Path(done).write_text("x")
    return Out(value=value + 1, done=done)


def scattered() -> Recipe:
    inner = Recipe("inner", Slice)
    inner.add_loop(
        "L",
        logged,
        max_iter=4,
        until="done",
        carry={"value": "value"},
        index_input="cycle",
        value=0,
        need=inner.inputs.need,
        done=inner.inputs.flag,
    )
    outer = Recipe("outer", Slices)
    outer.add_step(
        "per", inner, scatter=["flag", "need"], flag=outer.inputs.flags, need=outer.inputs.needs
    )
    return outer


def test_each_slice_of_a_scattered_loop_ignores_its_old_flag(tmp_path: Path) -> None:
    inputs = {"flags": ["a.flag", "b.flag"], "needs": [2, 3]}
    for _ in range(2):
        result = run_recipe(scattered(), inputs, cwd=tmp_path, use_cache=False)
        assert result.ok, result.error
        ran = sorted((tmp_path / "log").read_text().splitlines())
        assert ran == ["a.flag 1", "a.flag 2", "b.flag 1", "b.flag 2", "b.flag 3"]
        (tmp_path / "log").unlink()


# -- a path the pystep makes up itself: known only once it returns it -----------


@shinobi.pystep
def makes_it_up(value: int, need: int, cycle: int = 0) -> Out:
    """Names its flag itself (not handed): no one knows the path before the cycle."""
    flag = Path("made-up.flag")
    if value + 1 >= need:
        flag.write_text("x")
    return Out(value=value + 1, done=flag)


def test_a_flag_the_step_makes_up_counts_only_when_written_in_this_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judged by being there, the first run's flag ended every later run after its
    first cycle: the wrong value, exit 0, no word."""
    monkeypatch.chdir(tmp_path)  # the pystep writes its flag where it runs
    first = run(looped(makes_it_up, 6, done=None), tmp_path)
    assert first.outputs["final"] == 3 and skipped(first) == ["L.4", "L.5", "L.6"]
    again = run(looped(makes_it_up, 6, done=None), tmp_path, need=4)
    assert again.outputs["final"] == 4 and skipped(again) == ["L.5", "L.6"]
    assert any(
        "was there before this run and cycle 1 did not rewrite it" in w for w in again.warnings
    ), again.warnings


@shinobi.pystep
def copies_it_in(value: int, need: int, cycle: int = 0) -> Out:
    """Makes its flag by copying an old file with its times (as cp -p or rsync -a do)."""
    import shutil

    flag = Path("copied.flag")
    if value + 1 >= need:
        shutil.copy2("template.flag", flag)
    return Out(value=value + 1, done=flag)


def test_a_flag_copied_in_with_an_old_time_is_still_written_in_this_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judged by its modification time alone, a flag copied with its source's time
    was "there before this run": the loop ran on to its last cycle."""
    import os

    monkeypatch.chdir(tmp_path)
    (tmp_path / "template.flag").write_text("x")
    os.utime(tmp_path / "template.flag", (1_700_000_000, 1_700_000_000))
    result = run(looped(copies_it_in, 6, done=None), tmp_path)
    assert result.outputs["final"] == 3 and skipped(result) == ["L.4", "L.5", "L.6"]
