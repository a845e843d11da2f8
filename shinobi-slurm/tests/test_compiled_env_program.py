"""A compiled Slurm job runs a program whose path holds ``=``.

A cab with ``env`` ran as ``env K=V .../applycal=v2/applycal``, which GNU
``env`` read as one more variable: the job printed its environment and
completed, running nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Ninja
from launches import submit, wait_final
from test_compile import scripts

APPLY = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe
HERE = Path(__file__).resolve().parent
class In(BaseModel):
    pass
apply = Cab("apply", [str(HERE / "tools/applycal=v2/applycal")], In, None,
            env={"OMP_NUM_THREADS": "4"})
r = Recipe("r3", In)
r.add_step("apply", apply)
"""


def _applycal(tmp_path: Path) -> None:
    (tmp_path / "r3.py").write_text(APPLY)
    tool = tmp_path / "tools" / "applycal=v2" / "applycal"
    tool.parent.mkdir(parents=True)
    tool.write_text('#!/bin/sh\necho "calibrated $OMP_NUM_THREADS" >> applied.log\n')
    tool.chmod(0o755)


def test_the_script_runs_a_program_whose_path_holds_an_equals_sign(
    ninja: Ninja, tmp_path: Path
) -> None:
    _applycal(tmp_path)
    done = ninja("compile", "r3.py:r", "--container-runtime", "none")
    assert done.returncode == 0, done.stderr
    program = tmp_path / "tools" / "applycal=v2" / "applycal"
    line = f"env -- OMP_NUM_THREADS=4 /bin/bash -c 'exec -- \"$@\"' bash {program}\n"
    assert f"\n{line}" in scripts(done.stdout)["apply"]


@pytest.mark.usefixtures("slurm")
def test_a_launch_runs_a_program_whose_path_holds_an_equals_sign(
    ninja: Ninja, tmp_path: Path
) -> None:
    _applycal(tmp_path)
    launch = submit(ninja, "r3.py:r", "--container-runtime", "none")
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "completed", found
    assert (tmp_path / "applied.log").read_text() == "calibrated 4\n"
