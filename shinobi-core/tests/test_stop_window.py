"""A tool that exits 0 on the SIGTERM that reaches ninja too (``systemctl stop``,
``scancel``) may end before ninja notes the stop: its step was recorded ``ok``,
its half-written product kept its name and the step cache replayed it. A tool's
run that ended ``ok`` within :data:`shinobi.stop_window.STOP_WINDOW` before the
stop is now taken back: cancelled, set aside as ``.interrupted``, not cached.

The race itself is not run: the step ends, then the next step (which waits for
it) signals the run, and the window is widened so that a slow host cannot
move that signal out of it, or narrowed to nothing for the other side.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.runner import Interrupted, run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class _WriteIn(BaseModel):
    out: File


class _WriteOut(BaseModel):
    out: File


class _WaitIn(BaseModel):
    src: File


class _Nothing(BaseModel):
    pass


#: what a tool that trapped the SIGTERM leaves: part of its product, and exit 0
_WRITE = Cab(
    "write",
    ["/bin/sh", "-c", 'echo part > "$0"'],
    _WriteIn,
    _WriteOut,
    {"out": ParamMeta(positional=True)},
)
#: the step after it: says it started (the run is then signalled), and waits
_WAIT = Cab(
    "wait",
    ["/bin/sh", "-c", 'touch "$0.started"; sleep 30'],
    _WaitIn,
    _Nothing,
    {"src": ParamMeta(positional=True)},
)


def _signal_when(seen: Path) -> None:
    """SIGTERM to this process (the run's main thread) once ``seen`` exists."""

    def wait_then_signal() -> None:
        deadline = time.monotonic() + 30
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=wait_then_signal, daemon=True).start()


def _stopped(recipe: Recipe, inputs: dict[str, object], tmp_path: Path, seen: Path) -> Interrupted:
    from shinobi.config import load_config

    config = load_config(
        {
            "execution.grace_period": 0.5,
            "execution.max_workers": 1,
            "cache.dir": str(tmp_path / "cache"),
        }
    )
    _signal_when(seen)
    with pytest.raises(Interrupted) as caught:
        run_recipe(recipe, inputs, config=config, cwd=tmp_path, provenance=True)
    return caught.value


def _entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").glob("entries/*/*.json"))


def _manifest_steps(tmp_path: Path) -> dict[str, str]:
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    document = json.loads(manifest.read_text())
    assert document["status"] == "interrupted"
    return {step["name"]: step["status"] for step in document["steps"]}


def _two_steps() -> Recipe:
    recipe = Recipe("r")
    recipe.add_step("a", _WRITE, out="a.txt")
    recipe.add_step("b", _WAIT, src=recipe.outputs.a.out)
    return recipe


def test_a_step_that_ended_just_before_the_stop_is_cancelled_set_aside_and_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shinobi.stop_window.STOP_WINDOW", 120.0)
    stopped = _stopped(_two_steps(), {}, tmp_path, tmp_path / "a.txt.started")
    a, b = stopped.result.steps
    assert (a.status, b.status) == ("cancelled", "cancelled"), (a, b)
    assert "before the stop" in (a.error or ""), a.error
    assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "a.txt.interrupted").read_text() == "part\n"
    assert any("a.txt.interrupted" in w for w in a.warnings), a.warnings
    assert _entries(tmp_path) == []
    assert "cache_key" not in a.details
    assert _manifest_steps(tmp_path)["a"] == "cancelled"
    assert stopped.exit_code == 128 + signal.SIGTERM


def test_a_step_that_ended_before_the_window_stays_done_and_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other side: a step done before the window is trusted, as before."""
    monkeypatch.setattr("shinobi.stop_window.STOP_WINDOW", 0.0)
    stopped = _stopped(_two_steps(), {}, tmp_path, tmp_path / "a.txt.started")
    a, b = stopped.result.steps
    assert (a.status, b.status) == ("ok", "cancelled"), (a, b)
    assert (tmp_path / "a.txt").read_text() == "part\n"
    assert len(_entries(tmp_path)) == 1
    assert _manifest_steps(tmp_path)["a"] == "ok"


class _Outs(BaseModel):
    outs: list[str]


def test_a_scattered_step_whose_slices_ended_just_before_the_stop_is_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each slice is taken back, and the step that gathers them with it."""
    monkeypatch.setattr("shinobi.stop_window.STOP_WINDOW", 120.0)
    recipe = Recipe("s", _Outs)
    recipe.add_step("a", _WRITE, scatter=["out"], out=recipe.inputs.outs)
    inner = Recipe("inner")
    inner.add_step("w", _WRITE, out="n.txt")
    recipe.add_step("n", inner)
    recipe.add_step("b", _WAIT, src="a0.txt")
    recipe.add_step("c", _WAIT, src="a1.txt")
    # b waits on nothing it is wired to: it starts after a and n at one worker
    stopped = _stopped(
        recipe, {"outs": ["a0.txt", "a1.txt"]}, tmp_path, tmp_path / "a0.txt.started"
    )
    a, n, *_ = stopped.result.steps
    assert a.status == "cancelled" and a.slices is not None
    assert [s.status for s in a.slices] == ["cancelled", "cancelled"]
    assert n.status == "cancelled", n
    for name in ("a0.txt", "a1.txt", "n.txt"):
        assert not (tmp_path / name).exists(), name
        assert (tmp_path / f"{name}.interrupted").exists(), name
    assert _entries(tmp_path) == []
    recorded = _manifest_steps(tmp_path)
    assert recorded["a"] == recorded["a[0]"] == recorded["n"] == recorded["n.w"] == "cancelled"


def test_what_a_stop_may_take_back_is_kept_however_late_it_is_noted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Runs are forgotten once older than the window, counted from the stop once
    there is one: a step recorded late after the stop must not drop those before it."""
    import types

    from shinobi.stop_window import STOP_WINDOW, RecentRuns

    now = [1000.0]
    monkeypatch.setattr("shinobi.stop_window.time", types.SimpleNamespace(time=lambda: now[0]))
    recent = RecentRuns()
    recent.note("early", 1000.0, list, None)
    stop = 1000.0 + STOP_WINDOW / 2
    now[0] = 1000.0 + 10 * STOP_WINDOW  # the stop came; a worker notes its step late
    recent.note("late", now[0], list, stop)
    assert [e.name for e in recent.take(stop - STOP_WINDOW)] == ["early", "late"]
    assert recent.take(stop - STOP_WINDOW) == []  # each is taken back once
    recent.note("old", now[0] - 3 * STOP_WINDOW, list, None)
    recent.note("new", now[0], list, None)  # no stop: the old one is dropped
    assert [e.name for e in recent.take(0.0)] == ["new"]


@pytest.fixture
def faraway(monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend ``faraway`` that runs here but says it runs elsewhere, as Slurm's
    does; ``faraway_lost`` is one that could not confirm its job gone."""
    from dataclasses import replace

    from shinobi.backends import registry
    from shinobi.backends.base import BackendRun, Invocation, RunControl
    from shinobi.backends.native import NativeBackend

    class Faraway(NativeBackend):
        name = "faraway"
        capabilities = replace(NativeBackend.capabilities, remote=True)

    class Lost(Faraway):
        name = "faraway_lost"

        def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
            run = super().run(invocation, control)
            return replace(run, reason="never confirmed", details={"still_running": "job 7"})

    real = registry.load_plugin
    ours = {"faraway": Faraway, "faraway_lost": Lost}
    monkeypatch.setattr(registry, "load_plugin", lambda g, n: ours.get(n) or real(g, n))
    monkeypatch.setattr(registry, "check_name", lambda group, name: None)


def test_a_job_of_a_backend_that_runs_elsewhere_stays_done_however_close_to_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faraway: None
) -> None:
    """A Slurm job the signal never reached, recorded completed: taken back, it ran
    again next time over its kept product (an appending tool's, doubled)."""
    monkeypatch.setattr("shinobi.stop_window.STOP_WINDOW", 120.0)
    recipe = Recipe("r")
    recipe.add_step("a", _WRITE, out="a.txt", backend="faraway")
    recipe.add_step("b", _WAIT, src=recipe.outputs.a.out)
    stopped = _stopped(recipe, {}, tmp_path, tmp_path / "a.txt.started")
    a, b = stopped.result.steps
    assert (a.status, b.status) == ("ok", "cancelled"), (a, b)
    assert (tmp_path / "a.txt").read_text() == "part\n"
    assert _manifest_steps(tmp_path)["a"] == "ok"


#: a job that writes part of its product, says so, and is stopped there
_PART_THEN_WAIT = Cab(
    "part",
    ["/bin/sh", "-c", 'echo part > "$0"; touch "$0.started"; sleep 30'],
    _WriteIn,
    _WriteOut,
    {"out": ParamMeta(positional=True)},
)


@pytest.mark.parametrize("backend", ["faraway", "faraway_lost"])
def test_a_stopped_job_elsewhere_has_its_part_warned_of_and_left_in_place(
    tmp_path: Path, faraway: None, backend: str
) -> None:
    """A Ctrl-C of ``ninja run -b slurm`` while a job wrote a Measurement Set left
    the part under the product's name, and nothing said so. It is not moved (other
    hosts' timestamps cannot tell the user's files and links from the job's), but
    the step says it; not while the job may still be writing, though."""
    recipe = Recipe("r")
    recipe.add_step("a", _PART_THEN_WAIT, out="a.txt", backend=backend)
    stopped = _stopped(recipe, {}, tmp_path, tmp_path / "a.txt.started")
    (a,) = stopped.result.steps
    assert a.status == "cancelled", a
    assert (tmp_path / "a.txt").read_text() == "part\n"
    assert not (tmp_path / "a.txt.interrupted").exists()
    said = [w for w in a.warnings if "a.txt" in w and "a.txt.started" not in w]
    if backend == "faraway_lost":
        assert said == [], a.warnings
    else:
        assert said == [
            f"it was stopped after writing {str(tmp_path / 'a.txt')!r}, which is left as it"
            " is for you to look into: it may be incomplete, check it before anything uses it"
        ], a.warnings


def test_a_job_elsewhere_that_failed_has_its_part_warned_of(tmp_path: Path, faraway: None) -> None:
    """A job that ran out of time or memory on the cluster left its part as a step
    here does, and was the only kind said nothing of."""
    from shinobi.config import load_config

    failing = Cab(
        "fail",
        ["/bin/sh", "-c", 'echo part > "$0"; exit 3'],
        _WriteIn,
        _WriteOut,
        {"out": ParamMeta(positional=True)},
    )
    recipe = Recipe("r")
    recipe.add_step("a", failing, out="a.txt", backend="faraway")
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    (a,) = run_recipe(recipe, {}, config=config, cwd=tmp_path).steps
    assert a.status == "failed"
    assert any(
        w.startswith(f"it failed after writing {str(tmp_path / 'a.txt')!r}") for w in a.warnings
    ), a.warnings
