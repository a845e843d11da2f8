"""A required recipe output wired to a loop's output is checked when the last iteration is skipped.

``ninja run`` checks the recipe's outputs at its end: a converged loop hands
on the outputs of the iteration that converged, and a required one that is
not there fails the run. The compiled launch checked it only after the last
iteration's tool, and a skipped iteration runs none: it completed where the
run failed. The scripts run here under bash, in order, as Slurm would run
them one after the other; their tools are ``sh`` one-liners.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import Ninja
from test_compile import scripts

#: A Cab body that converges in its first cycle (it writes the flag) and makes
#: the image only when ``make-image`` exists; the recipe requires the image.
CAB_BODY = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class BIn(BaseModel):
    flag: Path
class BOut(BaseModel):
    image: File | None = None
    flag: Path | None = None
body = Cab("body", ["sh", "-c", '[ ! -e make-image ] || : > img.fits; : > "$0"'], BIn, BOut, {
    "flag": ParamMeta(positional=True),
    "image": ParamMeta(implicit="img.fits"),
})
class ROut(BaseModel):
    image: File
r = Recipe("r", BIn, ROut)
loop = r.add_loop("l", body, max_iter=2, until="flag", flag=r.inputs.flag)
r.set_output("image", loop.outputs.image)
"""

#: The same with a Recipe body: the image is one step's, the flag another's.
RECIPE_BODY = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class SIn(BaseModel):
    flag: Path
class SOut(BaseModel):
    image: File | None = None
shoot = Cab("shoot", ["sh", "-c", "[ ! -e make-image ] || : > img.fits"], None, SOut, {
    "image": ParamMeta(implicit="img.fits"),
})
class AOut(BaseModel):
    flag: Path | None = None
assess = Cab("assess", ["sh", "-c", ': > "$0"'], SIn, AOut, {"flag": ParamMeta(positional=True)})
class BOut(BaseModel):
    image: File | None = None
    flag: Path | None = None
body = Recipe("cycle", SIn, BOut)
body.add_step("shoot", shoot)
body.add_step("assess", assess, flag=body.inputs.flag)
body.set_output("image", body.outputs.shoot.image)
body.set_output("flag", body.outputs.assess.flag)
class ROut(BaseModel):
    image: File
r = Recipe("r", SIn, ROut)
loop = r.add_loop("l", body, max_iter=3, until="flag", flag=r.inputs.flag)
r.set_output("image", loop.outputs.image)
"""

BODIES = {"cab": (CAB_BODY, "l.2"), "recipe": (RECIPE_BODY, "l.3.shoot")}


def launch(ninja: Ninja, tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    """Compile the recipe and run its jobs in order, as afterok would: up to the
    first that fails. Returns the last job run."""
    (tmp_path / "lp.py").write_text(body)
    done = ninja("compile", "lp.py:r", "--flag", "conv.flag", "--container-runtime", "none")
    assert done.returncode == 0, done.stderr
    ran: list[tuple[str, subprocess.CompletedProcess[str]]] = []
    for name, script in scripts(done.stdout).items():
        ran.append(
            (
                name,
                subprocess.run(
                    ["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path
                ),
            )
        )
        if ran[-1][1].returncode != 0:
            break
    last, done = ran[-1]
    assert last == "l.2" or last.startswith("l.3."), last  # it got to the last iteration
    return done


@pytest.mark.parametrize("kind", list(BODIES))
def test_a_skipped_last_iteration_fails_as_ninja_run_on_an_unmade_output(
    ninja: Ninja, tmp_path: Path, kind: str
) -> None:
    body, last = BODIES[kind]
    (tmp_path / "lp.py").write_text(body)
    run = ninja("run", "lp.py:r", "--flag", "conv.flag")
    assert run.returncode == 1
    assert "recipe 'r': its output 'image' names 'img.fits', which does not exist" in run.stderr
    (tmp_path / "conv.flag").unlink()  # a new run: the loop notes the flag as absent

    ran = launch(ninja, tmp_path, body)
    assert ran.returncode == 1, ran.stdout
    assert f"converged before iteration {last.split('.')[1]}" in ran.stdout  # it was skipped
    assert ran.stderr.strip().startswith(
        f"shinobi: recipe 'r': its output 'image' names {tmp_path}/img.fits, which does not"
        " exist (loop l converged before iteration"
    )
    assert "Traceback" not in ran.stderr
    # failed, not skipped: no marker for ninja status to read as "skipped"
    assert not list(tmp_path.glob(f".shinobi/r/*/skipped/{last}"))


@pytest.mark.parametrize("kind", list(BODIES))
def test_a_skipped_last_iteration_completes_when_the_converged_one_made_it(
    ninja: Ninja, tmp_path: Path, kind: str
) -> None:
    body, last = BODIES[kind]
    (tmp_path / "make-image").touch()
    (tmp_path / "lp.py").write_text(body)
    assert ninja("run", "lp.py:r", "--flag", "conv.flag").returncode == 0
    for made in ("conv.flag", "img.fits"):
        (tmp_path / made).unlink()

    ran = launch(ninja, tmp_path, body)
    assert ran.returncode == 0, ran.stderr
    assert "nothing to do" in ran.stdout
    assert list(tmp_path.glob(f".shinobi/r/*/skipped/{last}"))


def test_a_skipped_last_iteration_fails_on_the_wrong_kind(ninja: Ninja, tmp_path: Path) -> None:
    """A directory where the recipe requires a file, as ``ninja run`` fails it."""
    (tmp_path / "img.fits").mkdir()
    (tmp_path / "lp.py").write_text(CAB_BODY)
    run = ninja("run", "lp.py:r", "--flag", "conv.flag")
    assert run.returncode == 1
    assert "'img.fits' is a directory, but the output is declared a File" in run.stderr
    (tmp_path / "conv.flag").unlink()

    ran = launch(ninja, tmp_path, CAB_BODY)
    assert ran.returncode == 1
    assert ran.stderr.strip() == (
        f"shinobi: recipe 'r': its output 'image': {tmp_path}/img.fits is a directory,"
        " but the output is declared a file"
    )


def test_the_script_says_the_skipped_iteration_still_checks(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "lp.py").write_text(CAB_BODY)
    done = ninja("compile", "lp.py:r", "--flag", "conv.flag", "--explain")
    assert done.returncode == 0, done.stderr
    assert (
        "if loop 'l' converged before iteration 2, runs no tool but still checks its output"
        " 'image': recipe 'r' requires it as its output 'image'"
    ) in done.stdout
