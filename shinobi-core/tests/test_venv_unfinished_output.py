"""The venv backend, like native, fails a step whose command exits 0 while a process
it left running still writes the step's output (see ``shinobi.backends.process``)."""

from __future__ import annotations

import time
from pathlib import Path

from test_venv_fixtures import made_venv

from shinobi.backends.base import Invocation, PathUse, RunControl
from shinobi.backends.venv import VenvBackend

__all__ = ["made_venv"]

# Holds "$0" open for writing until "$0.go" appears (at most ~10 s).
LEFT_WRITING = (
    '(exec > "$0"; echo part; i=0; while [ ! -e "$0.go" ] && [ $i -lt 200 ]; do'
    " sleep 0.05; i=$((i+1)); done; echo rest) &"
    # the step ends only once the writer holds the file, however loaded the machine
    ' while [ ! -s "$0" ]; do sleep 0.01; done'
)


def test_a_venv_step_that_leaves_its_output_half_written_fails(
    made_venv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "product.txt"
    invocation = Invocation(
        step="make",
        argv=("/bin/sh", "-c", LEFT_WRITING, str(out)),
        cwd=str(tmp_path),
        paths=(PathUse(str(out), "output", "out", "file"),),
        venv=str(made_venv),
    )
    try:
        run = VenvBackend({}).run(invocation, RunControl())
    finally:
        (tmp_path / "product.txt.go").touch()  # let the writer finish
    assert run.returncode != 0
    assert run.reason is not None and "still writing its output" in run.reason
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "rest" not in out.read_text():
        time.sleep(0.05)
