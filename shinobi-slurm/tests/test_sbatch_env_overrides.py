"""An ``SBATCH_*`` variable that beats an ``#SBATCH`` line ninja writes is said, and so
is ``SBATCH_TIMELIMIT`` in a TIMEOUT's advice.

sbatch lets its input environment variables win over a script's lines, and
``sbatch_opts`` (and a step's declared memory) become such lines. With
``SBATCH_TIMELIMIT=1`` in the shell, a configured ``--time=00:05:00`` became a
one-minute limit without a word, and the TIMEOUT then advised raising
``--time`` in sbatch_opts, which could not work. The variables are still
honoured (as documented); ninja now warns once per submission, and the
advice names the variable.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Ninja

from shinobi.launch.handle import LaunchHandle, LaunchJob
from shinobi_slurm.sacct import parse_line
from shinobi_slurm.sbatch import Option, overriding_environment
from shinobi_slurm.states import RAISE_TIME, classify, combine_tasks, timeout_advice
from shinobi_slurm.status import _launch_status

TIME = [Option("time", "00:05:00")]


def _jobs(*options: list[Option]) -> list[list[Option]]:
    return [[Option("job-name", "shinobi-x"), Option("output", "/o"), *extra] for extra in options]


def test_a_timelimit_variable_beating_the_configured_time_is_said_with_the_fix() -> None:
    [said] = overriding_environment({"SBATCH_TIMELIMIT": "1"}, _jobs(TIME, TIME), TIME)
    assert said.startswith("SBATCH_TIMELIMIT=1 in the environment overrides")
    assert "'#SBATCH --time=00:05:00'" in said and "[backend.slurm] sbatch_opts" in said
    assert "unset SBATCH_TIMELIMIT" in said and "\n" not in said


def test_nothing_is_said_without_a_variable_or_when_it_asks_for_the_same() -> None:
    assert overriding_environment({"PATH": "/bin"}, _jobs(TIME), TIME) == []
    same = {"SBATCH_TIMELIMIT": "00:05:00", "SBATCH_PARTITION": "debug"}
    assert overriding_environment(same, _jobs(TIME), TIME) == []  # no --partition written
    flag = [Option("exclusive")]
    for value in ("", "yes", "1"):  # sbatch's "on" for a flag: what the line says
        assert overriding_environment({"SBATCH_EXCLUSIVE": value}, _jobs(flag), []) == []
    [said] = overriding_environment({"SBATCH_EXCLUSIVE": "user"}, _jobs(flag), [])
    assert "SBATCH_EXCLUSIVE=user" in said and "'#SBATCH --exclusive'" in said


def test_a_steps_declared_memory_and_other_written_options_are_covered() -> None:
    derived = _jobs([Option("mem", "100M")], [Option("mem", "200M")])
    [said] = overriding_environment({"SBATCH_MEM_PER_NODE": "50M"}, derived, [])
    assert "'#SBATCH --mem'" in said and "what the steps declare" in said
    assert "put the --mem you want in [backend.slurm] sbatch_opts" in said
    opts = [Option("partition", "debug"), Option("qos", "normal"), Option("mem-per-cpu", "1G")]
    environ = {"SBATCH_PARTITION": "big", "SBATCH_QOS": "high", "SBATCH_MEM_PER_CPU": "2G"}
    said_all = overriding_environment(environ, _jobs(opts), opts)
    assert sorted(s.split("=", 1)[0] for s in said_all) == sorted(environ)


def _timed_out(extra: dict[str, object]) -> str | None:
    record = parse_line("9|9|TIMEOUT|0:15|s|e|None|64M|00:01:00|n1|cpu=1,mem=64M,node=1")
    assert record is not None
    handle = LaunchHandle(
        "slurm", "slow", "r1", "/w", jobs=[LaunchJob("s", job_id="9")], extra=extra
    )
    return _launch_status(handle, {"9": [record]}, None, False).steps[0].detail


def test_the_timeout_advice_names_the_variable_that_set_the_limit() -> None:
    record = parse_line("9|9|TIMEOUT|0:15|s|e|None")
    assert record is not None
    assert (classify(record).message or "").endswith(RAISE_TIME)
    said = classify(record, on_timeout=timeout_advice("1")).message or ""
    assert "SBATCH_TIMELIMIT=1" in said and "unset it" in said
    outcome, _ = combine_tasks([record], 1, on_timeout=timeout_advice("1"))
    assert "SBATCH_TIMELIMIT=1" in (outcome.message or "")
    # ninja status: as the handle recorded it; a handle from before, "possibly"
    assert "SBATCH_TIMELIMIT=1 " in (_timed_out({"sbatch_timelimit": "1"}) or "")
    assert (_timed_out({"sbatch_timelimit": None}) or "").endswith(RAISE_TIME)
    older = _timed_out({}) or ""
    assert RAISE_TIME in older and "unless SBATCH_TIMELIMIT was set" in older


def test_the_run_backend_names_its_own_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from shinobi_slurm.backend import _timeout_advice
    from shinobi_slurm.commands import SlurmCommands

    record = parse_line("9|9|TIMEOUT|0:15|s|e|None")
    assert record is not None
    local = SlurmCommands.from_settings({})
    monkeypatch.setenv("SBATCH_TIMELIMIT", "1")
    assert "SBATCH_TIMELIMIT=1" in _timeout_advice(record, local)
    monkeypatch.delenv("SBATCH_TIMELIMIT")
    assert _timeout_advice(record, local) == RAISE_TIME


RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe
class ShIn(BaseModel):
    script: str
class NoOut(BaseModel):
    pass
sh = Cab("s", ["/bin/sh", "-c"], ShIn, NoOut, {"script": ParamMeta(positional=True)})
class RIn(BaseModel):
    n: int = 1
two = Recipe("two", RIn, NoOut)
two.add_step("a", sh, script="true")
two.add_step("b", sh, script="true")
"""

OVERRIDING = {
    "SBATCH_TIMELIMIT": "4",
    "SHINOBI_BACKEND_SLURM_SBATCH_OPTS": '["--time=00:02:00"]',
}


def _warned(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "SBATCH_TIMELIMIT=4" in line]


@pytest.mark.usefixtures("slurm")
def test_run_on_slurm_warns_once_and_the_variable_still_wins(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "r.py").write_text(RECIPE)
    done = ninja("run", "r.py:two", "--backend", "slurm", "--no-cache", timeout=120, **OVERRIDING)
    assert done.returncode == 0, done.stderr
    [said] = _warned(done.stderr)
    # a run's warnings are lines of its progress, "[   0.1s] warning: ..."
    assert "warning: SBATCH_TIMELIMIT=4 in the environment overrides" in said
    assert "'#SBATCH --time=00:02:00'" in said


@pytest.mark.usefixtures("slurm")
def test_compile_submit_warns_once_and_records_the_variable(ninja: Ninja, tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "r.py").write_text(RECIPE)
    done = ninja("compile", "r.py:two", "--submit", "--json", timeout=60, **OVERRIDING)
    assert done.returncode == 0, done.stderr
    handle = json.loads(done.stdout)
    try:
        [said] = _warned(done.stderr)
        assert said.startswith("ninja: warning: SBATCH_TIMELIMIT=4")
        assert handle["extra"]["sbatch_timelimit"] == "4"
        job = handle["jobs"][0]["job_id"]
        shown = subprocess.run(
            ["scontrol", "show", "job", "-o", job], capture_output=True, text=True, check=False
        ).stdout
        if shown:  # still known to the controller: the variable set the limit, as documented
            assert "TimeLimit=00:04:00" in shown
    finally:
        subprocess.run(["scancel", *(j["job_id"] for j in handle["jobs"])], check=False)
