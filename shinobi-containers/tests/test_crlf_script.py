"""A script with Windows line endings.

``#!/bin/sh\\r\\n`` names the interpreter ``/bin/sh\\r``, which no image has.
The failure named it, but told the user to pick another interpreter
("#!/usr/bin/env python3, say"), which does not help; it now says the file
has Windows (CRLF) line endings and how to convert it, on every engine.
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

TOOL = "/proj/run1/tool.sh"


def reason(head: bytes) -> str | None:
    host = FileHost({TOOL: head})
    return unseen_script_reason(
        [TOOL],
        CWD,
        plan_mounts((), CWD, step="s", host=host),
        host,
        engine="docker",
        returncode=127,
        stderr=f"exec {TOOL} failed: No such file or directory",
    )


def test_a_crlf_shebang_is_said_with_the_conversion() -> None:
    said = reason(b"#!/bin/sh\r\necho ok\r\n")
    assert said is not None and "Windows (CRLF) line endings" in said, said
    assert f"dos2unix {TOOL}" in said and f"sed -i 's/\\r$//' {TOOL}" in said
    assert "python3" not in said


def test_a_missing_interpreter_keeps_its_own_advice() -> None:
    said = reason(b"#!/home/me/venv/bin/python\n")
    assert said is not None and "'/home/me/venv/bin/python'" in said and "CRLF" not in said


@pytest.mark.parametrize("engine", ENGINES)
def test_a_crlf_script_fails_saying_its_line_endings(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    tmp_path.chmod(0o777)
    script = tmp_path / "tools" / "crlf.sh"
    script.parent.mkdir()
    script.write_bytes(b"#!/bin/sh\r\necho ok > out.txt\r\n")
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
