"""A dry run warns of slices writing one output, as the run does."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

SCATTER = """\
from pydantic import BaseModel
from shinobi import Recipe
from shinobi.steps import Cab, File, ParamMeta

class In(BaseModel):
    src: str
    prefix: str

class Out(BaseModel):
    img: File | None = None

img = Cab(name="img", command="touch", inputs_model=In, outputs_model=Out,
          field_meta={"src": ParamMeta(skip=True), "prefix": ParamMeta(positional=True),
                      "img": ParamMeta(implicit="{prefix}")})

class RIn(BaseModel):
    srcs: list[str]
    names: list[str]

class ROut(BaseModel):
    imgs: list[File | None] = []

r = Recipe("r", RIn, ROut, max_workers=WORKERS)
r.add_step("image", img, scatter=["src", "prefix"], src=r.inputs.srcs, prefix=r.inputs.names)
r.set_output("imgs", r.outputs.image.img)

class OIn(BaseModel):
    srcs: list[str]
    names: list[str]

outer = Recipe("outer", OIn, ROut)
outer.add_step("inner", r, srcs=outer.inputs.srcs, names=outer.inputs.names)
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]
SAME = ("--srcs", "a", "--srcs", "b", "--names", "A.fits", "--names", "A.fits")


def _warned(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [
        line.removeprefix("ninja: warning: ")
        for line in proc.stderr.splitlines()
        if line.startswith("ninja: warning: ")
    ]


def test_the_dry_run_warns_of_slices_writing_one_output_as_the_run_does(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    """The clash was only in the step's box and a per-step JSON field: a check
    reading the ``warnings`` list, or stderr, missed a product being clobbered."""
    path = recipe_file(SCATTER.replace("WORKERS", "2"), "r.py")
    dry = ninja("run", f"{path}:r", *SAME, "--dryrun", "--json")
    assert dry.returncode == 0, dry.stderr
    warnings = json.loads(dry.stdout)["warnings"]
    clash = [w for w in warnings if "slices [0] and [1] both write" in w]
    assert len(clash) == 1 and clash[0].startswith("step 'image': "), warnings
    assert clash == [w for w in _warned(dry) if "both write" in w]
    run = ninja("run", f"{path}:r", *SAME, "--json")
    assert run.returncode == 0, run.stderr
    assert clash == [w for w in json.loads(run.stdout)["warnings"] if "both write" in w]


def test_one_worker_and_nested_recipes_are_warned_of_too(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    path = recipe_file(SCATTER.replace("WORKERS", "1"), "r.py")
    dry = ninja("run", f"{path}:outer", *SAME, "--dryrun")
    assert dry.returncode == 0, dry.stderr
    assert any(w.startswith("step 'inner.image': slices [0] and [1]") for w in _warned(dry))


def test_slices_with_their_own_outputs_are_not_warned_of(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    path = recipe_file(SCATTER.replace("WORKERS", "2"), "r.py")
    args = ("--srcs", "a", "--srcs", "b", "--names", "A.fits", "--names", "B.fits")
    dry = ninja("run", f"{path}:r", *args, "--dryrun", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["warnings"] == []


HARVEST = """\
from pydantic import BaseModel
from shinobi import Recipe
from shinobi.steps import Cab, File, ParamMeta

class In(BaseModel):
    prefix: str

class Out(BaseModel):
    imgs: list[File] = []

img = Cab(name="img", command=["sh", "-c", 'touch "$1-1.fits"', "sh"], inputs_model=In,
          outputs_model=Out, field_meta={"prefix": ParamMeta(positional=True),
                                         "imgs": ParamMeta(harvest="{prefix}-*.fits")})

class RIn(BaseModel):
    names: list[str]

class ROut(BaseModel):
    pass

r = Recipe("h", RIn, ROut)
r.add_step("image", img, scatter=["prefix"], prefix=r.inputs.names)
"""


def test_the_dry_run_warns_of_a_harvest_glob_taking_another_slices_files(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    path = recipe_file(HARVEST, "h.py")
    args = (f"{path}:r", "--names", "img", "--names", "img-deep", "--json")
    dry = ninja("run", *args, "--dryrun")
    assert dry.returncode == 0, dry.stderr
    said = json.loads(dry.stdout)["warnings"]
    assert any("harvest pattern 'img-*.fits' of slice 0" in w for w in said), said
    run = ninja("run", *args)
    assert run.returncode == 0, run.stderr
    assert said == json.loads(run.stdout)["warnings"]
