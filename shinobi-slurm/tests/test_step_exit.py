"""``ninja run --backend slurm`` keeps the tool's exit code as the tool gave it.

The step's job script used to run the tool under bash and relay any status
from 129 to 192 as a signal (``SIGNAL_RELAY``), so a tool that itself exits
130 or 137 was reported "killed by SIGINT/SIGKILL", where ``ninja run``
natively says "exited with code 130". The script now ``exec``s the tool:
Slurm records its real wait status.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import Ninja

from shinobi.backends.base import Invocation
from shinobi_slurm.backend import SlurmBackend
from shinobi_slurm.commands import SlurmError
from shinobi_slurm.sacct import parse_line, with_true_exit

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    code: int

exiter = Cab("exiter", ["/bin/sh", "-c", 'echo said >&2; exit "$1"', "exiter"], In, None,
             {"code": ParamMeta(positional=True)})
r = Recipe("r", In)
r.add_step("exiter", exiter, code=r.inputs.code)
"""


def _body(tmp_path: Path, payload: str) -> str:
    invocation = Invocation(step="s", argv=("/bin/sh", "-c", payload), cwd=str(tmp_path))
    script = SlurmBackend({}).script(invocation, "o", "e")
    return "\n".join(line for line in script.splitlines() if not line.startswith("#"))


@pytest.mark.parametrize(
    ("payload", "returncode"),
    [("exit 130", 130), ("exit 137", 137), ("exit 3", 3), ("kill -KILL $$", -9), ("true", 0)],
)
def test_the_script_ends_as_its_tool_ends(tmp_path: Path, payload: str, returncode: int) -> None:
    done = subprocess.run(["bash", "-c", _body(tmp_path, payload)], check=False)
    assert done.returncode == returncode


@pytest.mark.usefixtures("slurm")
@pytest.mark.parametrize("code", [128, 130, 137, 200])
def test_a_tool_exiting_above_128_is_not_reported_as_killed(
    ninja: Ninja, tmp_path: Path, code: int
) -> None:
    (tmp_path / "exits.py").write_text(RECIPE)
    done = ninja("run", "exits.py:r", "--code", str(code), "--backend", "slurm")
    assert done.returncode == 1
    assert f"step 'exiter' failed: exited with code {code}: said" in done.stderr, done.stderr
    assert "killed by" not in done.stderr


class Controller:
    """scontrol's answer for one job (None: it has forgotten the job)."""

    def __init__(self, exit_text: str | None) -> None:
        self.exit_text = exit_text
        self.calls: list[list[str]] = []

    def run(self, tool: str, args: list[str]) -> str:
        self.calls.append([tool, *args])
        if self.exit_text is None:
            raise SlurmError("scontrol failed: slurm_load_jobs error: Invalid job id specified")
        return f"JobId=7 JobName=x JobState=FAILED Reason=NonZeroExitCode ExitCode={self.exit_text}"


def _record(state: str, exit_text: str):  # type: ignore[no-untyped-def]
    return parse_line(f"7|7|{state}|{exit_text}|2026-01-01T00:00:00|2026-01-01T00:00:01|None")


@pytest.mark.parametrize(
    ("sacct", "scontrol", "code"),
    [("9:0", "137:0", 137), ("0:0", "128:0", 128), ("72:0", "200:0", 200), ("3:0", "3:0", 3)],
)
def test_the_controller_restores_what_accounting_cut_down(
    sacct: str, scontrol: str, code: int
) -> None:
    record = with_true_exit(Controller(scontrol), _record("FAILED", sacct))  # type: ignore[arg-type]
    assert record.exit_code == code


@pytest.mark.parametrize(
    ("state", "sacct", "scontrol"),
    [("FAILED", "9:0", None), ("FAILED", "0:9", "0:9"), ("FAILED", "9:0", "10:0")],
)
def test_sacct_stands_when_the_controller_cannot_correct_it(
    state: str, sacct: str, scontrol: str | None
) -> None:
    before = _record(state, sacct)
    assert with_true_exit(Controller(scontrol), before) == before  # type: ignore[arg-type]


def test_a_completed_job_costs_no_scontrol_call() -> None:
    controller = Controller("0:0")
    with_true_exit(controller, _record("COMPLETED", "0:0"))  # type: ignore[arg-type]
    assert controller.calls == []
