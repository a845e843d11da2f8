"""A script with Windows line endings started through ``/usr/bin/env``.

``#!/usr/bin/env sh\\r`` starts env, which then finds no ``sh\\r`` and exits
127. The runtime exec'd the script fine, so the CRLF advice (which waited
for the runtime's own exec failure) never came: the user read env's
"No such file or directory" and went looking for a missing program.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend
from test_command_script import CWD, FileHost

from recipes import config_for
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe
from shinobi_containers.mounts import plan_mounts
from shinobi_containers.scripts import unseen_script_reason

TOOL = "/proj/run1/tool.py"


def reason(head: bytes, stderr: str) -> str | None:
    host = FileHost({TOOL: head})
    return unseen_script_reason(
        [TOOL],
        CWD,
        plan_mounts((), CWD, step="s", host=host),
        host,
        engine="docker",
        returncode=127,
        stderr=stderr,
    )


def test_env_looking_for_an_interpreter_with_a_carriage_return_is_said_as_crlf() -> None:
    said = reason(
        b"#!/usr/bin/env python3\r\nprint(1)\r\n",
        "/usr/bin/env: 'python3\\r': No such file or directory\n",
    )
    assert said is not None and "Windows (CRLF) line endings" in said, said
    assert f"dos2unix {TOOL}" in said


def test_a_script_that_runs_and_misses_a_file_of_its_own_is_not_blamed() -> None:
    said = reason(b"#!/usr/bin/env python3\nopen('x')\n", "python3: can't open file: x\n")
    assert said is None or "CRLF" not in said


@pytest.mark.parametrize("engine", ENGINES)
def test_an_env_crlf_script_fails_saying_its_line_endings(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    tmp_path.chmod(0o777)
    script = tmp_path / "tools" / "crlf_env.sh"
    script.parent.mkdir()
    script.write_bytes(b"#!/usr/bin/env sh\r\necho ok > out.txt\r\n")
    script.chmod(0o755)
    recipe = Recipe(name="r")
    recipe.add_step("tool", Cab(name="tool", command=[str(script)], image=image(engine)))
    result = run_recipe(
        recipe, backend=engine, config=config_for(engine), cwd=tmp_path, use_cache=False
    )
    step = result.steps[0]
    assert step.status == "failed"
    assert step.error is not None and "Windows (CRLF) line endings" in step.error, step.error
    assert "dos2unix" in step.error
