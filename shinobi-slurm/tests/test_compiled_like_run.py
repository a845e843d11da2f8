"""A compiled launch does what ``ninja run`` does where the two had drifted apart.

Found reading the scripts as a site admin would:

* a one-at-a-time array (its slices share a path one rewrites) went on after a
  failed slice, since Slurm's ``%1`` only throttles: later slices rewrote what
  the failed one left, where ``ninja run`` starts no slice after a failure;
* a cab whose command starts with a word bash runs itself (``time -v tool``,
  ``echo``) ran bash's keyword or builtin on the cluster ("-v: command not
  found") and the program of that name under ``ninja run``;
* a requeued job truncated its logs: compiled jobs did not set
  ``--open-mode=append``, which the docs say every job carries.

Each script is run here by bash as Slurm would run it (the array's task id in
the environment), which needs no Slurm; the live suites run such scripts too.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import Ninja
from test_compile import scripts

SHARED = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    log: Path
    n: int

append = Cab(
    "append", ["/bin/sh", "-c", 'echo "slice $1" >> "$0"; [ "$1" != 1 ]'], In, None,
    {"log": ParamMeta(positional=True, mutable=True), "n": ParamMeta(positional=True)},
)

class Slices(BaseModel):
    ns: list[int] = [0, 1, 2, 3]

r = Recipe("r", Slices)
r.add_step("t", append, log=Path("shared.log"), n=r.inputs.ns, scatter=["n"])
"""

SAID = """
from pydantic import BaseModel
from shinobi.steps import Cab

class In(BaseModel):
    pass

say = Cab("say", ["echo", "--version"], In, None)
"""


def _compiled(ninja: Ninja, tmp_path: Path, source: str, *args: str) -> dict[str, str]:
    (tmp_path / "r.py").write_text(source)
    done = ninja("compile", *args, "--container-runtime", "none")
    assert done.returncode == 0, done.stderr
    return scripts(done.stdout)


def _run(script: str, cwd: Path, task: int | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if task is not None:
        env["SLURM_ARRAY_TASK_ID"] = str(task)
    return subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_a_one_at_a_time_array_stops_at_its_first_failed_slice(
    ninja: Ninja, tmp_path: Path
) -> None:
    script = _compiled(ninja, tmp_path, SHARED, "r.py:r")["t"]
    assert "#SBATCH --array=0-3%1" in script
    codes = [_run(script, tmp_path, task).returncode for task in range(4)]
    assert codes == [0, 1, 1, 1]
    assert (tmp_path / "shared.log").read_text() == "slice 0\nslice 1\n"
    said = _run(script, tmp_path, 3).stderr
    assert "slice 3 not started: slice 1 failed before it" in said


def test_a_command_bash_would_run_itself_runs_the_program(ninja: Ninja, tmp_path: Path) -> None:
    script = _compiled(ninja, tmp_path, SAID, "r.py:say")["say"]
    assert "/bin/bash -c 'exec -- \"$@\"' bash echo --version" in script
    done = _run(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "coreutils" in done.stdout  # the program echo; bash's own printed "--version"


def test_every_compiled_job_appends_to_its_logs(ninja: Ninja, tmp_path: Path) -> None:
    compiled = {
        **_compiled(ninja, tmp_path, SHARED, "r.py:r"),
        **_compiled(ninja, tmp_path, SAID, "r.py:say"),
    }
    assert compiled and all("\n#SBATCH --open-mode=append\n" in s for s in compiled.values())
