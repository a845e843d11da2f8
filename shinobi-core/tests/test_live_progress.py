"""The live terminal view's counts: a stopped run's cancelled steps are not failures."""

from __future__ import annotations

import io

from shinobi.render.progress import LiveProgress
from shinobi.steps import StepResult


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
    summary = [line for line in stream.getvalue().splitlines() if "done," in line][-1]
    assert "1 done" in summary and "0 failed, 2 cancelled" in summary
