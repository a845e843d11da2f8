"""The memory-stall watchdog on a real apptainer, whose kernel stalls now and then.

On this testbed's kernel (cgroup v1), the hog, a pipe whose reader hoards its
input, stalls at a 64 MiB limit in about half its runs instead of being
killed: without the watchdog the step never ended (see shinobi_containers.stall).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from live_engines import image, live_backend

from recipes import MEMORY_HOG, config_for, one_step
from shinobi.resources import Resources
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe

TRIES = 12
WINDOW = 3

#: Holds 64 MiB, then writes and reads a file for six seconds through what is
#: left of a 96 MiB limit: at the limit, charges failing all along, and working.
STREAMER = """
import os, time
hoard = bytearray(64 << 20)
for i in range(0, len(hoard), 4096):
    hoard[i] = 1
chunk, moved, end = b"x" * (1 << 20), 0, time.monotonic() + 6
while time.monotonic() < end:
    with open("big", "wb") as f:
        for _ in range(200):
            f.write(chunk)
    with open("big", "rb") as f:
        while block := f.read(1 << 20):
            moved += len(block)
os.remove("big")
print(moved)
"""


def test_a_step_stuck_at_its_limit_is_killed_and_reported_out_of_memory(tmp_path: Path) -> None:
    live_backend("apptainer")
    config = config_for("apptainer", memory_stall_timeout=WINDOW)
    recipe = one_step("hog", MEMORY_HOG, image("apptainer"), Resources(memory="64MiB"))
    for attempt in range(TRIES):
        (tmp_path / str(attempt)).mkdir()  # run_recipe makes no folder it is pointed at
        started = time.monotonic()
        result = run_recipe(
            recipe, backend="apptainer", config=config, cwd=tmp_path / str(attempt), use_cache=False
        )
        took = time.monotonic() - started
        step = result.steps[0]
        assert step.status == "failed" and step.returncode == 137, step.error
        assert step.error is not None and "out of memory" in step.error and "64MiB" in step.error
        if "memory_stall_timeout" in step.error:
            assert "no progress" in step.error
            assert took < WINDOW + 30, took
            return
    pytest.skip(f"the kernel killed the hog itself in all {TRIES} runs: no stall to watch")


def test_a_step_working_at_its_limit_is_left_alone(tmp_path: Path) -> None:
    live_backend("apptainer")
    tmp_path.chmod(0o777)
    recipe = Recipe(name="streamer")
    cab = Cab(
        name="streamer", command=["python3", "-c", STREAMER], image=image("apptainer", "python")
    )
    recipe.add_step("only", cab, resources=Resources(memory="96MiB"))
    config = config_for("apptainer", memory_stall_timeout=2)
    result = run_recipe(recipe, backend="apptainer", config=config, cwd=tmp_path, use_cache=False)
    assert result.ok, result.steps[0].error
    assert int(result.steps[0].stdout) > 0
