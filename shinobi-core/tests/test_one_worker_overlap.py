"""At one worker a step is prepared while the tool before it runs, and judged while
the next one runs (see ``_Wavefront.run_here``); the run must still look and
behave as one step after another."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shinobi.backends.base import BackendRun, Invocation, RunControl
from shinobi.backends.native import NativeBackend
from shinobi.backends.process import prepare_process
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe
from shinobi.steps.refs import OutputRef
from shinobi.steps.result import StepResult

# Records its start, exits with $2 (and leaves $3 unmade, it never writes it).
SCRIPT = 'date +%s.%N > "$1.start"; exit "$2"'


class StampIn(BaseModel):
    stamp: str
    code: int = 0


class NoIn(BaseModel):
    pass


class Promised(BaseModel):
    made: File


stamp = Cab(
    "stamp",
    ["/bin/sh", "-c", SCRIPT, "stamp"],
    StampIn,
    field_meta={k: ParamMeta(positional=True) for k in ("stamp", "code")},
)


class MakesIn(BaseModel):
    stamp: str
    made: File


# Promises an output file and, with an empty name, never makes it.
makes = Cab(
    "makes",
    ["/bin/sh", "-c", 'date +%s.%N > "$1.start"; [ "$2" != none ] && touch "$2"; exit 0', "m"],
    MakesIn,
    Promised,
    field_meta={k: ParamMeta(positional=True) for k in ("stamp", "made")},
)


class AfterIn(BaseModel):
    stamp: str
    after: File


after = Cab(
    "after",
    ["/bin/sh", "-c", 'date +%s.%N > "$1.start"', "after"],
    AfterIn,
    field_meta={k: ParamMeta(positional=True) for k in ("stamp", "after")},
)


class Events:
    """What the run said, in the order it said it."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []

    def step_started(self, name: str, info: dict[str, Any]) -> None:
        self.said.append(("start", name))

    def step_finished(self, result: StepResult) -> None:
        self.said.append(("done", result.name))

    def warning(self, message: str) -> None:
        pass


def started_at(tmp_path: Path, name: str) -> float:
    return float((tmp_path / f"{name}.start").read_text())


def test_each_step_is_said_done_before_the_next_is_said_started(tmp_path: Path) -> None:
    recipe = Recipe("r", NoIn, max_workers=1)
    names = [f"s{i}" for i in range(6)]
    for name in names:
        recipe.add_step(name, stamp, stamp=str(tmp_path / name))
    events = Events()
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False, observers=[events])
    assert result.ok
    assert events.said == [(kind, n) for n in names for kind in ("start", "done")]
    starts = [started_at(tmp_path, n) for n in names]
    assert starts == sorted(starts)


def test_nothing_starts_after_a_tool_that_failed(tmp_path: Path) -> None:
    recipe = Recipe("r", NoIn, max_workers=1)
    recipe.add_step("bad", stamp, stamp=str(tmp_path / "bad"), code=3)
    recipe.add_step("next", stamp, stamp=str(tmp_path / "next"))
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.status == "failed" and result.failed_step == "bad"
    assert (tmp_path / "bad.start").exists()
    assert not (tmp_path / "next.start").exists()
    assert [s.status for s in result.steps] == ["failed"]


def test_a_step_whose_outputs_fail_it_stops_the_run_after_the_tool_already_started(
    tmp_path: Path,
) -> None:
    """Its tool exited 0, so the next one started at once; the run stops after it."""
    recipe = Recipe("r", NoIn, max_workers=1)
    recipe.add_step("unmade", makes, stamp=str(tmp_path / "unmade"), made="none")
    recipe.add_step("next", stamp, stamp=str(tmp_path / "next"))
    recipe.add_step("last", stamp, stamp=str(tmp_path / "last"))
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.status == "failed" and result.failed_step == "unmade"
    assert "did not create" in (result.error or "") or "none" in (result.error or "")
    assert (tmp_path / "next.start").exists()
    assert not (tmp_path / "last.start").exists()


def test_a_dependant_declared_first_runs_before_a_later_independent_step(tmp_path: Path) -> None:
    recipe = Recipe("r", NoIn, max_workers=1)
    recipe.add_step("a", makes, stamp=str(tmp_path / "a"), made=str(tmp_path / "a.out"))
    recipe.add_step("c", after, stamp=str(tmp_path / "c"), after=OutputRef(step="a", field="made"))
    recipe.add_step("b", stamp, stamp=str(tmp_path / "b"))
    events = Events()
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False, observers=[events])
    assert result.ok, result.error
    assert [n for kind, n in events.said if kind == "start"] == ["a", "c", "b"]
    assert started_at(tmp_path, "a") < started_at(tmp_path, "c") < started_at(tmp_path, "b")


def test_a_step_the_one_before_it_would_serve_from_the_cache_waits_to_be_served(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / "cache"))
    recipe = Recipe("r", NoIn, max_workers=1)
    for name in ("first", "again"):
        recipe.add_step(name, Cab("say", ["/bin/echo", "said once"]))
    result = run_recipe(recipe, cwd=tmp_path)
    assert result.ok, result.error
    assert [s.status for s in result.steps] == ["ok", "cached"]


class _OwnRun(NativeBackend):
    name = "own-run"
    ran = 0

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        type(self).ran += 1
        return super().run(invocation, control)


def test_a_backend_whose_run_was_replaced_is_never_started_ahead(tmp_path: Path) -> None:
    invocation = Invocation(step="s", argv=("/bin/true",), cwd=str(tmp_path))
    control = RunControl()
    assert _OwnRun().prepare_run(invocation, control) is None
    prepared = NativeBackend().prepare_run(invocation, control)
    assert prepared is not None
    prepared.discard()


def test_a_prepared_process_never_started_leaves_no_descriptor_open(tmp_path: Path) -> None:
    control = RunControl()
    before = set(os.listdir("/proc/self/fd"))
    for _ in range(20):
        prepare_process(["/bin/true"], cwd=str(tmp_path), control=control).discard()
    assert set(os.listdir("/proc/self/fd")) <= before


def test_a_prepared_process_runs_as_run_process_would(tmp_path: Path) -> None:
    control = RunControl()
    prepared = prepare_process(
        ["/bin/sh", "-c", "echo hi; exit 4"], cwd=os.getcwd(), control=control
    )
    run = prepared.start().wait()
    assert run.returncode == 4 and run.stdout == "hi\n"


def test_a_prepared_process_started_after_a_stop_never_runs(tmp_path: Path) -> None:
    control = RunControl()
    marker = tmp_path / "ran"
    prepared = prepare_process(["/bin/touch", str(marker)], cwd=os.getcwd(), control=control)
    control.cancel()
    run = prepared.start().wait()
    assert run.cancelled and not marker.exists()
