"""A compiled job whose required list output's harvest glob matched nothing
fails, as ``ninja run`` fails the step: the job script checked a single
harvested output only, so the job completed and its dependants ran on nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Ninja
from launches import steps, submit, wait_final

pytestmark = pytest.mark.usefixtures("slurm")

SHOOT = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    script: str = "true"

class Made(BaseModel):
    images: list[File]

shoot = Cab("shoot", ["sh", "-c"], In, Made,
            {"script": ParamMeta(positional=True), "images": ParamMeta(harvest="img-*.fits")})
r = Recipe("r", In)
r.add_step("shoot", shoot, script=r.inputs.script)
"""


@pytest.mark.parametrize(
    ("script", "state"), [("true", "failed"), ("touch img-1.fits", "completed")]
)
def test_a_job_whose_required_list_harvest_matched_nothing_fails(
    ninja: Ninja, tmp_path: Path, script: str, state: str
) -> None:
    (tmp_path / "shoot.py").write_text(SHOOT)
    launch = submit(ninja, "shoot.py:r", "--script", script)
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == state, found["summary"]
    if state == "failed":
        assert steps(found)["shoot"]["detail"] == (
            f'the tool exited 0, but output "images": nothing matched its harvest pattern'
            f" {tmp_path}/img-*.fits"
        )
