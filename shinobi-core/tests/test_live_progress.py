"""The live terminal view's counts: a stopped run's cancelled steps are not failures."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from pydantic import create_model

from shinobi.render import progress
from shinobi.render.progress import LiveProgress
from shinobi.steps import Cab, ParamMeta, Recipe, StepResult


def test_cancelled_steps_are_counted_as_cancelled_not_failed() -> None:
    stream = io.StringIO()
    view = LiveProgress(stream, total=3)
    try:
        view.step_finished(StepResult(name="a", status="ok"))
        view.step_finished(StepResult(name="b", status="cancelled", error="interrupted"))
        view.step_finished(StepResult(name="c", status="cancelled", error="interrupted"))
        with view.lock:
            view._draw()
    finally:
        view.close()
    summary = [line for line in stream.getvalue().splitlines() if " running," in line][-1]
    assert "1/3 done" in summary and "0 failed, 2 cancelled" in summary


def _summary(view: LiveProgress, stream: io.StringIO) -> str:
    with view.lock:
        view._draw()
    return [line for line in stream.getvalue().splitlines() if " running," in line][-1]


def test_slices_count_as_work_done_and_their_step_as_no_longer_waiting() -> None:
    """A 20-slice step read '0 done, 4 running, 0 waiting' with three steps to go, and
    the run ended at '24 done' for 4 steps: slices were done, totals were steps."""
    stream = io.StringIO()
    view = LiveProgress(stream, total=4)  # first, fan (scattered), after1, after2
    try:
        view.step_finished(StepResult(name="first", status="ok"))
        view.slices_planned("fan", 4, 1)
        for k in range(4):
            view.step_started(f"fan[{k}]", {})
        assert "1/7 done, 4 running, 2 waiting" in _summary(view, stream)
        parts = [StepResult(name=f"fan[{k}]", status="ok") for k in range(4)]
        for part in parts:
            view.step_finished(part)
        view.step_finished(StepResult(name="fan", status="ok", slices=parts))  # gathered
        assert "5/7 done, 0 running, 2 waiting" in _summary(view, stream)
    finally:
        view.close()


def test_the_slices_waiting_are_counted_and_the_total_shown() -> None:
    """A 2000-slice scatter read '0 waiting' from its start, and no total: a
    40-hour run showed nothing of how far along it was."""
    stream = io.StringIO()
    view = LiveProgress(stream, total=1)
    try:
        view.slices_planned("scat", 2000, 1)
        for k in range(108):
            view.step_started(f"scat[{k}]", {})
        for k in range(100):
            view.step_finished(StepResult(name=f"scat[{k}]", status="ok"))
        assert "100/2000 done, 8 running, 1892 waiting, 0 failed" in _summary(view, stream)
    finally:
        view.close()


Texts = create_model("Texts", texts=(list[str], ["a", "b", "c"]))
Text = create_model("Text", text=(str, ...))
say = Cab("say", ["true"], Text, None, {"text": ParamMeta(positional=True)}, cache=False)


def test_a_run_counts_every_slice_a_nested_recipe_s_too(tmp_path: Path) -> None:
    """Planned by the run as each scatter starts: 3 slices of one step, and 3
    slices of a nested recipe of two steps, one a scatter of 3."""
    from shinobi.runner import run_recipe

    sub = Recipe("sub", Texts)
    sub.add_step("one", say, text="x")
    sub.add_step("fan", say, scatter=["text"], text=sub.inputs.texts)
    recipe = Recipe("p", Texts, max_workers=2)
    recipe.add_step("hello", say, scatter=["text"], text=recipe.inputs.texts)
    recipe.add_step("ns", sub, scatter=["texts"], texts=[["a", "b", "c"]] * 3)
    stream = io.StringIO()
    view = LiveProgress(stream, total=3)  # hello, ns.one, ns.fan
    try:
        assert run_recipe(recipe, cwd=tmp_path, use_cache=False, observers=[view]).ok
        assert "15/15 done, 0 running, 0 waiting" in _summary(view, stream)  # 3 + 3 x (1 + 3)
    finally:
        view.close()


def test_the_live_lines_fit_the_terminal(monkeypatch: Any) -> None:
    """A wrapped line took two rows, and the redraw moved up one too few to erase it."""
    import os

    monkeypatch.setattr(progress, "_terminal_size", lambda _: os.terminal_size((40, 20)))
    stream = io.StringIO()
    view = LiveProgress(stream, total=1)
    try:
        view.step_started("calibrate_the_very_long_named_measurement_set_step", {})
        with view.lock:
            view._draw()
    finally:
        view.close()
    drawn = [line for line in stream.getvalue().split("\n") if "running" in line]
    assert drawn and all(len(line.split("\x1b[J")[-1]) <= 39 for line in drawn)


def _screen(output: str) -> list[str]:
    """The rows ``output`` leaves on a terminal, for the two codes the view sends:
    ``ESC[nF`` (up n rows, to the first column) then ``ESC[J`` (clear below)."""
    rows: list[str] = []
    for k, part in enumerate(re.split(r"\x1b\[(\d+)F\x1b\[J", output)):
        if k % 2:
            del rows[len(rows) - int(part) :]
        else:
            rows += part.split("\n")[:-1]
    return rows


SAID = "ninja: SIGINT: stopping the running steps (SIGTERM, then SIGKILL after 10 s)"


def test_a_stop_signal_s_notice_stays_above_the_view_which_says_it_is_stopping() -> None:
    """Written past the view, the notice was erased by the next redraw, which
    left stale rows; the view went on saying '2 running' for the grace period."""
    stream = io.StringIO()
    view = LiveProgress(stream, total=2)
    view.stop.set()  # the test draws, as the view's thread would
    view.thread.join()
    view.step_started("a", {})
    view.step_started("b", {})
    with view.lock:
        view._draw()
        # in a signal handler that came while the view held its lock: no deadlock
        assert view.stop_notice(SAID, 10)
    with view.lock:  # the next tick
        view._clear()
        view._say_notices()
        view._draw()
    screen = _screen(stream.getvalue())
    assert screen[0] == SAID
    assert screen[-1].startswith("  stopping: 2 steps (SIGKILL in 10 s)")
    for name in ("a", "b"):
        view.step_finished(StepResult(name=name, status="cancelled", error="interrupted"))
    view.stop_notice("ninja: interrupted again: killing the steps now (SIGKILL)", 0)
    view.close()
    screen = _screen(stream.getvalue())
    assert screen[0] == SAID and "interrupted again" in screen[-2]
    assert not [row for row in screen if row.startswith("  running")]  # no stale rows


def test_the_signal_handler_says_it_through_the_live_view(capfd: Any) -> None:
    import os
    import signal

    from shinobi.config import load_config
    from shinobi.runner import _signals
    from shinobi.session import Session

    view = LiveProgress(io.StringIO(), total=1)
    session = Session(config=load_config({}), observers=[view])
    session.emit_started("a", {})
    try:
        with _signals(session):
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        view.close()
    assert "stopping the running steps" in view.stream.getvalue()  # type: ignore[attr-defined]
    assert "stopping" not in capfd.readouterr().err  # not past the view


def test_the_view_leaves_a_tally_of_the_run_as_it_is_erased() -> None:
    """On a terminal the view was all there was of the counts, and it is erased
    as the run ends."""
    stream = io.StringIO()
    view = LiveProgress(stream, total=5)
    view.step_finished(StepResult(name="a", status="ok"))
    view.step_finished(StepResult(name="b", status="cached"))
    view.step_finished(StepResult(name="c", status="ok"))
    view.step_finished(StepResult(name="d", status="failed", error="exited with code 1"))
    view.close()
    assert _screen(stream.getvalue())[-1].endswith("] 3/5 done (1 cached), 1 failed, 1 not run")
