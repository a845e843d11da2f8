"""Plain progress (a pipe, a CI log) printed nothing between a silent step's
``start`` and its ``done``: half an hour without a line, and many CI systems
end a job after ten minutes of silence. After each stretch of silence it now
says what is still running; the live view and ``--json`` do not."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from recipe_cli import pipe_runner

from shinobi.render import progress
from shinobi.render.progress import HeartbeatProgress, PlainProgress, make_progress
from shinobi.steps import StepResult


def _until(stream: io.StringIO, text: str) -> str:
    """What ``stream`` holds once ``text`` is in it (a minute at most)."""
    deadline = time.monotonic() + 60
    while text not in stream.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    return stream.getvalue()


def test_silence_gets_a_line_naming_what_still_runs() -> None:
    stream = io.StringIO()
    view = HeartbeatProgress(stream, total=2, every=0.05)
    try:
        view.step_started("calibrate", {"backend": "native"})
        said = _until(stream, "still running")
    finally:
        view.close()
    assert "] still running: calibrate (" in said


def test_a_heartbeat_names_five_steps_and_counts_the_rest() -> None:
    view = HeartbeatProgress(io.StringIO(), total=7)
    view.close()  # no beat of its own: the line is asked for here
    for k in range(7):
        view.step_started(f"s[{k}]", {})
    view.step_finished(StepResult(name="s[0]", status="ok"))
    line = view.still_running()
    assert line.startswith("still running: s[1] (") and line.endswith(" and 1 more")
    assert "s[0]" not in line and "s[6]" not in line


def test_only_plain_lines_asked_for_get_heartbeats() -> None:
    beating = make_progress(1, io.StringIO(), heartbeat=True)
    beating.close()
    assert type(beating) is HeartbeatProgress
    quiet = make_progress(1, io.StringIO())
    quiet.close()
    assert type(quiet) is PlainProgress


RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe

class Nothing(BaseModel):
    pass

pipe = Recipe("pipe")
pipe.add_step("wait", Cab("wait", ["sleep", "0.5"], Nothing, Nothing))
"""


@pytest.mark.parametrize(("args", "beats"), [((), True), (("--json",), False)])
def test_ninja_run_beats_in_plain_lines_not_with_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], beats: bool
) -> None:
    monkeypatch.setattr(progress, "HEARTBEAT", 0.05)
    run = pipe_runner(tmp_path, monkeypatch, RECIPE)
    result = run("--no-cache", *args)
    assert result.exit_code == 0, result.output
    assert ("still running: wait (" in result.stderr) is beats
