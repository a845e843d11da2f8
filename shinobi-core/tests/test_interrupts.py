"""Interrupts: what a step that failed because of the stop is called, the
warnings an orchestration function's stopped ``ctx.run()`` made, and a harvest
glob (or an implicit output) that also matches the step's own input."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from shinobi.backends.base import PathUse
from shinobi.runner import Interrupted, run_recipe
from shinobi.steps.result import RecipeResult, StepResult


def _interrupt_once(seen: Path) -> None:
    """SIGINT to this process (the run's main thread) once ``seen`` exists; then a
    file ``signalled`` beside ``seen`` says the signal was sent."""

    def wait_then_signal() -> None:
        deadline = time.monotonic() + 30
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)
        (seen.parent / "signalled").touch()

    threading.Thread(target=wait_then_signal, daemon=True).start()


def _interrupted(recipe: object, tmp_path: Path, seen: Path) -> Interrupted:
    from shinobi.config import load_config

    config = load_config({"execution.grace_period": 0.5, "cache.enabled": False})
    _interrupt_once(seen)
    with pytest.raises(Interrupted) as caught:
        run_recipe(recipe, config=config, cwd=tmp_path)
    return caught.value


def _sh() -> object:
    from pydantic import BaseModel

    from shinobi.steps import Cab, File, ParamMeta

    class ShIn(BaseModel):
        script: str
        out: File

    class ShOut(BaseModel):
        out: File

    meta = {"script": ParamMeta(positional=True), "out": ParamMeta(positional=True)}
    return Cab("sh", ["/bin/sh", "-c"], ShIn, ShOut, meta)


def test_a_function_that_fails_because_its_tool_was_stopped_is_not_blamed(
    tmp_path: Path,
) -> None:
    """It raised once its ctx.run() came back cancelled: the stop's doing, not a
    failure that came before it, which the message and failed_step would name."""
    import shinobi
    from shinobi.steps import Recipe

    @shinobi.step(_sh())
    def strict(ctx):  # type: ignore[no-untyped-def]
        res = ctx.run(script='echo part > "$0"; sleep 30')
        if res.status != "ok":
            raise RuntimeError(f"imaging failed: {res.status}")
        return res

    recipe = Recipe("o3")
    recipe.add_step("strict", strict, script="x", out="orch.out")
    stopped = _interrupted(recipe, tmp_path, tmp_path / "orch.out")
    assert "had failed before" not in str(stopped), stopped
    (step,) = stopped.result.steps
    assert step.status == "cancelled" and "imaging failed" in (step.error or "")
    assert any("orch.out.interrupted" in w for w in step.warnings), step.warnings
    from shinobi.teardown import interrupted_fields

    assert interrupted_fields(signal.SIGINT, (), stopped.result)["failed_step"] is None


def test_a_pystep_that_fails_after_the_stop_is_cancelled(tmp_path: Path) -> None:
    """An in-process pystep whose subprocess died of the same Ctrl-C raises after it."""
    import shinobi
    from shinobi.steps import Recipe

    started, stop_seen = tmp_path / "started", tmp_path / "stop-seen"

    @shinobi.pystep
    def conv(seconds: float) -> int:
        started.touch()
        deadline = time.monotonic() + seconds
        while not stop_seen.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        raise RuntimeError("its tool died with SIGINT")

    def stop_seen_later() -> None:  # the pystep fails once the stop was asked for
        signalled = tmp_path / "signalled"
        deadline = time.monotonic() + 30
        while not signalled.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(1.0)  # what is left is the main thread running its signal handler
        stop_seen.touch()

    threading.Thread(target=stop_seen_later, daemon=True).start()
    recipe = Recipe("pc")
    recipe.add_step("conv", conv, seconds=20.0)
    stopped = _interrupted(recipe, tmp_path, started)
    assert "had failed before" not in str(stopped), stopped
    assert [s.status for s in stopped.result.steps] == ["cancelled"]


def test_a_step_that_failed_before_the_stop_is_still_named(tmp_path: Path) -> None:
    """The other side: a failure that came first stays the run's failed step."""
    from shinobi.backends.base import RunControl

    control = RunControl()
    before = time.time()
    time.sleep(0.01)
    control.request_stop()
    assert not control.stopped_before(before)
    assert control.stopped_before(time.time()) and control.stopped_before(None)
    assert not RunControl().stopped_before(None)  # no stop asked for: nothing changes
    result = RecipeResult(
        "r", "cancelled", steps=[StepResult("bad", "failed", error="exited with code 4")]
    )
    assert "step 'bad' had failed before" in str(Interrupted(signal.SIGINT, result, ()))


@pytest.mark.parametrize("calls", [1, 2])
def test_a_function_s_stopped_call_warns_of_its_set_aside_part_once(
    tmp_path: Path, calls: int
) -> None:
    """A second ctx.run() after the stopped one made the step's result its own:
    the warning that the first one's partial output was renamed was lost."""
    import shinobi
    from shinobi.steps import Recipe

    @shinobi.step(_sh())
    def again(ctx):  # type: ignore[no-untyped-def]
        made = ctx.run(script='echo part > "$0"; sleep 30')
        return ctx.run(script='echo second > "$0"') if calls == 2 else made

    recipe = Recipe("o2")
    recipe.add_step("again", again, script="x", out="orch.out")
    stopped = _interrupted(recipe, tmp_path, tmp_path / "orch.out")
    (step,) = stopped.result.steps
    renamed = [w for w in step.warnings if "orch.out.interrupted" in w]
    assert len(renamed) == 1, step.warnings
    assert (tmp_path / "orch.out.interrupted").read_text() == "part\n"


def _written_after_start(uses: list[PathUse]) -> tuple[dict, float]:  # type: ignore[type-arg]
    from shinobi.untouched_outputs import existing_outputs

    before = existing_outputs(uses)
    time.sleep(0.06)  # timestamps tick coarsely: the step's writes come clearly after
    return before, time.time()


def test_a_harvest_glob_that_matches_the_step_s_input_leaves_it(tmp_path: Path) -> None:
    """``{prefix}*`` with prefix ``obs`` matched the input ``obs.txt`` the tool appends
    to: the interrupt renamed the user's input, and the next run had none."""
    from shinobi.interrupted_outputs import set_aside

    obs = tmp_path / "obs.txt"
    obs.write_text("# data\n")
    old = time.time() - 3600
    os.utime(obs, (old, old))
    uses = [
        PathUse(str(obs), "input", "data", "file"),
        PathUse(str(tmp_path / "obs*"), "output", "products", "any", pattern=True),
    ]
    before, started = _written_after_start(uses)
    with obs.open("a") as appended:
        appended.write("# processed\n")
    (tmp_path / "obs-prod.txt").write_text("p\n")
    asides = {a.path: a for a in set_aside(uses, {"data", "prefix"}, before, started)}
    assert obs.read_text() == "# data\n# processed\n"  # where it was
    kept = asides[str(obs)]
    assert kept.moved_to is None and "also one of its inputs" in kept.warning()
    assert asides[str(tmp_path / "obs-prod.txt")].moved_to == str(
        tmp_path / "obs-prod.txt.interrupted"
    )


def test_an_implicit_output_naming_an_input_leaves_it_if_it_was_there(tmp_path: Path) -> None:
    """An input there before the step is the user's; one the step made (a path it
    was handed to write) is its product, moved as before."""
    from shinobi.interrupted_outputs import set_aside

    there, made = tmp_path / "there.txt", tmp_path / "made.txt"
    there.write_text("mine\n")
    old = time.time() - 3600
    os.utime(there, (old, old))
    uses = [
        PathUse(str(there), "input", "data", "file"),
        PathUse(str(there), "output", "same", "file"),
        PathUse(str(made), "input", "out", "any"),
        PathUse(str(made), "output", "product", "file"),
    ]
    before, started = _written_after_start(uses)
    with there.open("a") as appended:
        appended.write("half\n")
    made.write_text("half\n")
    asides = {a.path: a for a in set_aside(uses, {"data", "out"}, before, started)}
    assert asides[str(there)].moved_to is None and there.read_text() == "mine\nhalf\n"
    assert asides[str(made)].moved_to == str(made) + ".interrupted"


def test_a_mutable_input_a_stopped_step_changed_stays_and_is_warned_of(tmp_path: Path) -> None:
    """A Ctrl-C during a flagger left c.ms half-flagged under its name, with no word."""
    from pydantic import BaseModel

    from shinobi.steps import MS, Cab, ParamMeta, Recipe

    class VisIn(BaseModel):
        vis: MS

    class NothingOut(BaseModel):
        pass

    ms = tmp_path / "c.ms"
    ms.mkdir()
    (ms / "table.dat").write_text("raw\n")
    script = 'echo half >> "$0/table.dat"; touch "$0.started"; sleep 30'
    meta = {"vis": ParamMeta(positional=True, mutable=True)}
    recipe = Recipe("m")
    recipe.add_step("flag", Cab("flag", ["/bin/sh", "-c", script], VisIn, NothingOut, meta), vis=ms)
    stopped = _interrupted(recipe, tmp_path, tmp_path / "c.ms.started")
    (step,) = stopped.result.steps
    assert step.status == "cancelled"
    assert (ms / "table.dat").read_text() == "raw\nhalf\n"  # never moved
    assert not (tmp_path / "c.ms.interrupted").exists()
    (warning,) = step.warnings
    assert f"'{ms}', an input it rewrites in place, so it is left where it is" in warning
    assert "half-rewritten" in warning and "copy of the raw data" in warning


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("signals and /proc, as ninja's teardown uses them")
