"""``ninja run --backend slurm`` keeps each step's job script in the run folder,
and the script holds the tool's command line: with a secret input's value in
clear. It was written readable by everyone (0644), on storage a cluster shares;
it is now its owner's only, as the rest of what holds the value in clear (the
step's logs) is documented to be kept private.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from conftest import Ninja

RECIPE = """
from pydantic import BaseModel, SecretStr
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    token: SecretStr

class Out(BaseModel):
    pass

t = Cab("t", ["/bin/sh", "-c", "test -n \\"$1\\"", "sh"], In, Out, {"token": ParamMeta(positional=True)})
r = Recipe("r", In, Out)
r.add_step("t", t, token=r.inputs.token)
"""


@pytest.mark.usefixtures("slurm")
def test_a_job_script_holding_a_secret_is_readable_by_its_owner_only(
    ninja: Ninja, tmp_path: Path
) -> None:
    (tmp_path / "s.py").write_text(RECIPE)
    done = ninja("run", "s.py:r", "--token", "hunter2", "--backend", "slurm")
    assert done.returncode == 0, done.stderr
    assert "hunter2" not in done.stdout + done.stderr
    scripts = list((tmp_path / ".shinobi" / "runs").glob("*/slurm/*.sbatch"))
    assert scripts, "the run kept no job script"
    for script in scripts:
        assert "hunter2" in script.read_text()  # the tool needs it: the file must be private
        assert stat.S_IMODE(script.stat().st_mode) == 0o600, oct(script.stat().st_mode)
