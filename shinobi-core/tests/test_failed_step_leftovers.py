"""What a step that failed by itself left running is stopped before it is reported.

A tool that started a background worker and then crashed (or was killed by
the out-of-memory killer, its worker spared) left the worker writing after
the step and ninja had ended: the next run rewrote the output, the old worker
appended to it, and the mixture was reported done and cached. A step that
exited 0 keeps its leftovers (a server it started on purpose), warned of.

Every worker here writes its pid to a file and waits for a flag file
(``go``) before it appends, so the tests find their own processes without
looking at anyone else's, and nothing outlives them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from live_processes import alive
from pydantic import BaseModel

from shinobi.backends import process
from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe
from shinobi.steps.result import StepResult

#: The auditor's tool: the header, a worker that appends to the output once
#: ``go`` exists (at most ~20 s on), then a crash when ``FAIL`` exists. $1: the
#: output; $2: what the crash is (``exit 1`` unless given, ``kill -9 $$``); $3:
#: ``trap '' TERM`` for a worker that ignores SIGTERM.
TOOL = """\
echo "header" > "$1"
sh -c "$3"'
echo $$ > worker.pid
i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
echo "worker line" >> "$0"' "$1" &
while [ ! -s worker.pid ]; do sleep 0.01; done
[ -e FAIL ] && { echo "driver crashed" >&2; eval "${2:-exit 1}"; }
wait
"""

RECIPE = """
from pydantic import BaseModel
from shinobi import Recipe
from shinobi.steps import Cab, File, ParamMeta

class I(BaseModel):
    out: File

class O(BaseModel):
    out: File | None = None

t = Cab(name="t", command=["sh", "tool.sh"], inputs_model=I, outputs_model=O,
        field_meta={"out": ParamMeta(positional=True)}, cache=True)

class RI(BaseModel):
    pass

r = Recipe("r", RI, O)
r.add_step("t", t, out="o.txt")
r.set_output("out", r.outputs.t.out)
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def _worker(tmp_path: Path) -> int:
    return int((tmp_path / "worker.pid").read_text())


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "tool.sh").write_text(TOOL)
    yield tmp_path
    (tmp_path / "go").touch()  # a worker that outlived its test ends now
    with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
        os.kill(_worker(tmp_path), signal.SIGKILL)


def test_a_failed_steps_worker_writes_nothing_into_the_next_run(
    workdir: Path, ninja: Ninja
) -> None:
    (workdir / "r.py").write_text(RECIPE)
    (workdir / "FAIL").touch()
    failed = ninja("run", "r.py:r")
    assert failed.returncode == 1, failed.stderr
    worker = _worker(workdir)
    assert not alive(worker), "the failed step's worker outlived it"
    assert f"it failed and left pid {worker} (sh -c " in failed.stderr
    assert "they were stopped" in failed.stderr
    (workdir / "FAIL").unlink()
    (workdir / "worker.pid").unlink()
    (workdir / "go").touch()  # this run's own worker appends at once
    done = ninja("run", "r.py:r")
    assert done.returncode == 0, done.stderr
    assert (workdir / "o.txt").read_text() == "header\nworker line\n"
    again = ninja("run", "r.py:r")
    assert again.returncode == 0 and "cached" in again.stderr, again.stderr
    assert (workdir / "o.txt").read_text() == "header\nworker line\n"


class ToolIn(BaseModel):  # in the order of the tool's arguments
    out: File
    crash: str
    worker_setup: str


class ToolOut(BaseModel):
    out: File


TOOL_CAB = Cab(
    name="tool",
    command=["sh", "tool.sh"],
    inputs_model=ToolIn,
    outputs_model=ToolOut,
    field_meta={
        "out": ParamMeta(positional=True),
        "crash": ParamMeta(positional=True),
        "worker_setup": ParamMeta(positional=True),
    },
)


def _run_tool(workdir: Path, crash: str, worker_setup: str = ":") -> StepResult:
    recipe = Recipe("r", ToolIn)
    recipe.add_step(
        "tool",
        TOOL_CAB,
        out=recipe.inputs.out,
        crash=recipe.inputs.crash,
        worker_setup=recipe.inputs.worker_setup,
    )
    config = load_config({"execution.grace_period": 0.3, "cache.enabled": False})
    inputs = {"out": "o.txt", "crash": crash, "worker_setup": worker_setup}
    return run_recipe(recipe, inputs, config=config, cwd=workdir, workdir=workdir).steps[0]


@pytest.mark.parametrize("crash", ["exit 1", "kill -9 $$"])
def test_a_worker_that_ignores_sigterm_is_killed_when_its_step_fails(
    workdir: Path, crash: str
) -> None:
    (workdir / "FAIL").touch()
    step = _run_tool(workdir, crash, worker_setup="trap '' TERM")
    assert step.status == "failed", step.error
    worker = _worker(workdir)
    assert not alive(worker), "a worker that ignores SIGTERM outlived its failed step"
    assert any(w.startswith(f"it failed and left pid {worker} ") for w in step.warnings), (
        step.warnings
    )


def test_a_successful_steps_worker_keeps_running_and_is_warned_of(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "SETTLE", 0.3)
    # the tool waits for its worker; a step that exits 0 without it is this one
    (workdir / "tool.sh").write_text(TOOL.replace("\nwait\n", "\nexit 0\n"))
    step = _run_tool(workdir, "exit 1")
    assert step.status == "ok", step.error
    worker = _worker(workdir)
    assert alive(worker), "a successful step's leftover was stopped"
    (warning,) = step.warnings
    assert warning.startswith(f"it left pid {worker} ") and "may still change" in warning
