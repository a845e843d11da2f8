"""An interrupt stops what a step that had already ended left running, even a
child that cleared its environment (so carries no teardown tag) and was
found, while the step ran, only by the step's session.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from live_processes import alive

from shinobi.config import load_config
from shinobi.runner import Interrupted, run_recipe
from shinobi.steps import Cab, Recipe


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 20
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_an_interrupt_stops_a_clean_environment_child_of_a_finished_step(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "leftover.pid"
    ready = tmp_path / "second.ready"
    # env -i execs sleep in the backgrounded process, so $! is the sleep's pid
    first = Cab(
        "first", ["sh", "-c", 'env -i sleep 300 >/dev/null 2>&1 & echo $! > "$0"', str(pidfile)]
    )
    second = Cab("second", ["sh", "-c", 'touch "$0"; exec sleep 300', str(ready)])
    recipe = Recipe("pipe")
    recipe.add_step("first", first)
    recipe.add_step("second", second)
    config = load_config({"execution.grace_period": 0.3, "cache.enabled": False})

    def interrupt_when_second_runs() -> None:
        _wait_for(ready)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_when_second_runs, daemon=True).start()
    leftover = 0
    try:
        with pytest.raises(Interrupted) as caught:
            run_recipe(recipe, config=config, cwd=tmp_path)
        leftover = int(pidfile.read_text())
        assert caught.value.exit_code == 130
        assert not alive(leftover), "the finished step's child outlived the interrupt"
    finally:
        if not leftover and pidfile.exists():
            leftover = int(pidfile.read_text())
        if leftover and alive(leftover):
            with contextlib.suppress(ProcessLookupError):
                os.kill(leftover, signal.SIGKILL)
