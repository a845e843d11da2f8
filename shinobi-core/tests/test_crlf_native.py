"""Scripts with Windows line endings, run natively.

``#!/bin/sh\\r`` made exec fail, and the failure said the #! line names
``/bin/sh``, "which does not exist (a moved or rebuilt venv?)": the ``\\r``
was read as blank space, so the message named an interpreter that is there.
``#!/usr/bin/env python3\\r`` starts env, which exits 127 finding no
``python3\\r``, and only env's own words reached the user. Both now say the
file has Windows line endings and how to convert it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe


@pytest.mark.parametrize(
    "head", [b"#!/bin/sh\r\n", b"#!/usr/bin/env sh\r\n"], ids=["direct", "env"]
)
def test_a_crlf_script_fails_saying_its_line_endings(head: bytes, tmp_path: Path) -> None:
    script = tmp_path / "tool.sh"
    script.write_bytes(head + b"echo ok\r\n")
    script.chmod(0o755)
    recipe = Recipe(name="r")
    recipe.add_step("tool", Cab(name="tool", command=["./tool.sh"]))
    result = run_recipe(recipe, cwd=tmp_path, workdir=tmp_path, use_cache=False)
    step = result.steps[0]
    assert step.status == "failed"
    assert step.error is not None and "Windows (CRLF) line endings" in step.error, step.error
    assert "dos2unix ./tool.sh" in step.error
    assert "moved or rebuilt venv" not in step.error


def test_a_tool_that_exits_127_on_its_own_keeps_its_words(tmp_path: Path) -> None:
    script = tmp_path / "tool.sh"
    script.write_bytes(b"#!/bin/sh\necho 'no-such-thing: not found' >&2\nexit 127\n")
    script.chmod(0o755)
    recipe = Recipe(name="r")
    recipe.add_step("tool", Cab(name="tool", command=["./tool.sh"]))
    result = run_recipe(recipe, cwd=tmp_path, workdir=tmp_path, use_cache=False)
    error = result.steps[0].error or ""
    assert "no-such-thing: not found" in error and "CRLF" not in error, error
