"""Compiled Slurm jobs fail as ``ninja run`` does on an unmade recipe output.

A required recipe output wired by ``set_output`` to an output the cab leaves
optional failed ``ninja run`` but not the launch: the job that makes it now
checks it after its tool.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Ninja
from launches import steps, submit, wait_final
from test_compile import scripts

IMAGING = """
from pydantic import BaseModel
from shinobi.steps import MS, Cab, File, ParamMeta, Recipe

class ImIn(BaseModel):
    ms: MS
class ImOut(BaseModel):
    image: File
    psf: File | None = None
image = Cab("image", ["sh", "-c", 'echo img > "$(basename "$0" .ms)-image.fits"'], ImIn, ImOut, {
    "ms": ParamMeta(positional=True),
    "image": ParamMeta(implicit="{ms.stem}-image.fits"),
    "psf": ParamMeta(implicit="{ms.stem}-psf.fits"),
})
class RIn(BaseModel):
    ms: MS
class ROut(BaseModel):
    image: File
    psf: File
r = Recipe("r1", RIn, ROut)
r.add_step("image", image, ms=r.inputs.ms)
r.set_output("image", r.outputs.image.image)
r.set_output("psf", r.outputs.image.psf)
"""


def test_the_script_checks_the_output_the_recipe_requires(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "r1.py").write_text(IMAGING)
    (tmp_path / "obs.ms").mkdir()
    done = ninja("compile", "r1.py:r", "--ms", "obs.ms", "--container-runtime", "none")
    assert done.returncode == 0, done.stderr
    script = scripts(done.stdout)["image"]
    assert f"  [ -e {tmp_path}/obs-psf.fits ] || {{ echo " in script
    assert "# note: after its tool, checks its output 'psf': recipe 'r1' requires it" in script


@pytest.mark.usefixtures("slurm")
def test_a_launch_fails_as_ninja_run_does_when_a_required_recipe_output_is_unmade(
    ninja: Ninja, tmp_path: Path
) -> None:
    (tmp_path / "r1.py").write_text(IMAGING)
    (tmp_path / "obs.ms").mkdir()
    assert ninja("run", "r1.py:r", "--ms", "obs.ms").returncode == 1
    launch = submit(ninja, "r1.py:r", "--ms", "obs.ms", "--container-runtime", "none")
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "failed"
    assert steps(found)["image"]["detail"] == (
        f'the tool exited 0, but output "psf": the tool did not create {tmp_path}/obs-psf.fits'
    )
