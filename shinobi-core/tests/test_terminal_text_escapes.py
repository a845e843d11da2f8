"""A tool's escape sequences reached ninja's own lines. The
``FAILED`` progress line kept its colours (``ESC[31m``) in a pipe, and the final
``ninja: error:`` line kept them on a terminal even with ``NO_COLOR=1`` (click
strips them in a pipe only). Every escape is removed from a tool's text in
ninja's lines now, the same in every mode; the logs keep the tool's bytes."""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi.render.progress import PlainProgress
from shinobi.render.terminal_text import for_terminal
from shinobi.steps.result import StepResult

ESCAPES = "\x1b[31mred\x1b[0m \x1b[2J\x1b[Hcleared \x1b[1Aup\x1b[K"

RECIPE = """\
from pydantic import BaseModel
from shinobi import Recipe
from shinobi.steps import Cab, ParamMeta

class SIn(BaseModel):
    code: str

class SOut(BaseModel):
    pass

sh = Cab(name="sh", command="sh -c", inputs_model=SIn, outputs_model=SOut,
         field_meta={"code": ParamMeta(positional=True)})

class RIn(BaseModel):
    pass

r = Recipe("esc", RIn, SOut)
r.add_step("b", sh, code="printf '\\\\033[31mred\\\\033[0m \\\\033[2J\\\\033[Hcleared\\\\n' >&2; exit 1")
"""


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (ESCAPES, "red cleared up"),
        ("\x1b[1;31mred", "red"),  # a colour left on would run into ninja's next lines
        ("a\x07b\x00c\x7fd", "abcd"),
        ("tab\tkept", "tab\tkept"),
        ("one\r\ntwo\rthree", "one two three"),  # one line of ninja's
        ("plain", "plain"),
    ],
)
def test_every_escape_and_control_is_removed(raw: str, shown: str) -> None:
    assert for_terminal(raw) == shown


def test_the_failed_line_has_no_escapes() -> None:
    out = io.StringIO()
    progress = PlainProgress(out, 1)
    progress.step_finished(
        StepResult("b", "failed", returncode=1, error=f"exited with code 1: {ESCAPES}")
    )
    progress.step_finished(StepResult("w", "ok", warnings=[f"said {ESCAPES}"]))
    assert "\x1b" not in out.getvalue()
    assert "FAILED    b: exited with code 1: red cleared up" in out.getvalue()
    assert "warning: step w: said red cleared up" in out.getvalue()


def _on_a_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """What ``argv`` writes to stderr when stderr is a terminal (a pseudo-terminal)."""
    master, slave = os.openpty()
    with subprocess.Popen(argv, cwd=cwd, env=env, stderr=slave, stdout=slave) as proc:
        os.close(slave)
        chunks = []
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                proc.kill()
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode()


def test_the_final_error_line_is_the_same_in_a_pipe_and_on_a_terminal(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str, str], Path],
    tmp_path: Path,
) -> None:
    path = recipe_file(RECIPE, "e.py")
    piped = ninja("run", f"{path}:r")
    assert piped.returncode == 1
    assert "\x1b" not in piped.stderr, repr(piped.stderr)
    assert "FAILED    b: exited with code 1: red cleared" in piped.stderr
    assert "ninja: error: step 'b' failed: exited with code 1: red cleared\n" in piped.stderr
    env = {**os.environ, "NO_COLOR": "1", "SHINOBI_CACHE_DIR": str(tmp_path / ".cache")}
    shown = _on_a_terminal([sys.executable, "-m", "shinobi.cli", "run", f"{path}:r"], tmp_path, env)
    last = shown.rstrip().splitlines()[-1]  # its line ends in "\r\n" (a terminal's)
    assert last.endswith("ninja: error: step 'b' failed: exited with code 1: red cleared"), repr(
        shown
    )
    assert "\x1b[31m" not in last and "\x1b[2J" not in shown
    # the tool's own bytes stay in its log, in `ninja logs` and as data in --json
    run_id = sorted(p.name for p in (tmp_path / ".shinobi" / "runs").iterdir())[0]
    logs = ninja("logs", run_id, "b")
    assert "\x1b[31mred\x1b[0m \x1b[2J\x1b[Hcleared" in logs.stdout + logs.stderr
    as_json = ninja("run", f"{path}:r", "--json")
    assert "\x1b[31mred" in json.loads(as_json.stdout)["error"]
