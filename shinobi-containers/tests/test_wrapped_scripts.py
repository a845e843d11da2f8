"""A script run through a wrapper.

``timeout 30 sh /proj/recipes/tools/tool.sh`` ran natively, but in a
container the script was not mounted (only ``env`` was looked through), and
the step failed with the shell's raw "can't open" error. The common wrappers
(``timeout``, ``nice``, ``env``, ``stdbuf``, ``nohup``, ``time``,
``busybox``) are now looked through to the command they run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend
from test_command_script import CWD, SCRIPT, project

from recipes import config_for
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe
from shinobi_containers.scripts import command_scripts


@pytest.mark.parametrize(
    "argv",
    [
        ["timeout", "30", "sh", SCRIPT],
        ["timeout", "-s", "KILL", "-k", "5", "30s", SCRIPT],
        ["timeout", "--signal=TERM", "--preserve-status", "30", "python3", SCRIPT],
        ["nice", "-n", "5", "bash", "-e", SCRIPT],
        ["nice", "-10", SCRIPT],
        ["/usr/bin/nice", "--adjustment", "3", SCRIPT],
        ["env", "-i", "A=1", "-u", "B", "python3", SCRIPT],
        ["env", "-", "A=1", "python3", SCRIPT],  # `-` is env's -i, no command
        ["stdbuf", "-oL", "-e", "L", "sh", SCRIPT],
        ["nohup", SCRIPT],
        ["time", "-p", "-f", "%e", "-o", "t.txt", SCRIPT],
        ["busybox", "sh", SCRIPT],
        ["timeout", "30", "nice", "-n", "2", "env", "A=1", "sh", SCRIPT],
    ],
)
def test_the_script_behind_a_wrapper_is_found(argv: list[str]) -> None:
    assert [path for _, path in command_scripts(argv, CWD)] == [SCRIPT]


@pytest.mark.parametrize(
    "argv",
    [
        ["timeout", "30", "wsclean", SCRIPT],  # the image's program; its argument is data
        ["env", "-C", "/elsewhere", "sh", SCRIPT],  # run from another directory: not read
        ["timeout", "30", "sh", "-c", "echo hi", SCRIPT],
    ],
)
def test_what_a_wrapper_runs_is_read_as_any_command(argv: list[str]) -> None:
    assert command_scripts(argv, CWD) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_script_behind_timeout_runs_in_the_container(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    script, run = project(tmp_path)
    recipe = Recipe(name="r")
    argv = ["timeout", "30", "sh", str(script), "world"]
    recipe.add_step("only", Cab(name="tool", command=argv, image=image(engine)))
    result = run_recipe(recipe, backend=engine, config=config_for(engine), cwd=run, use_cache=False)
    assert result.steps[0].status == "ok", result.steps[0].error
    assert (run / "hello.txt").read_text() == "hello world\n"
