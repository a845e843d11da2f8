"""An in-process pystep that installs a signal handler fails saying what to do.

Python allows ``signal.signal`` on the main thread only; an in-process pystep
runs on one of ninja's worker threads, so a function that works from a script
failed with Python's bare ValueError and nothing about why or what would do.
"""

from __future__ import annotations

import signal
from pathlib import Path

from shinobi.runner import run_recipe
from shinobi.steps import Recipe, pystep


@pystep
def handles_term() -> int:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return 1


@pystep
def other_value_error() -> int:
    raise ValueError("bad value, says the tool")


def _error(step: object, tmp_path: Path) -> str:
    recipe = Recipe("r")
    recipe.add_step("s", step)  # type: ignore[arg-type]
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    (only,) = result.steps
    assert only.status == "failed"
    return str(only.error)


def test_a_signal_handler_in_process_fails_naming_the_way_out(tmp_path: Path) -> None:
    error = _error(handles_term, tmp_path)
    assert error.startswith("ValueError: signal only works in main thread")
    assert "runs on a worker thread" in error and "venv=" in error


def test_a_value_error_of_the_function_own_is_said_as_it_is(tmp_path: Path) -> None:
    error = _error(other_value_error, tmp_path)
    assert error == "ValueError: bad value, says the tool (traceback in the step's stderr)"
