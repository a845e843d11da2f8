"""A dry run's JSON carries the warnings it prints."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

DUP = """\
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe, StepRef

class TI(BaseModel):
    out: Path

class TO(BaseModel):
    out: Path | None = None

class E(BaseModel):
    pass

touch = Cab(name="touch", command="/bin/touch", inputs_model=TI, outputs_model=TO,
            field_meta={"out": ParamMeta(positional=True)})
tool = Cab(name="tool", command="./build/tool", inputs_model=E, outputs_model=E)
dup = Recipe(name="dup", inputs_model=E, outputs_model=E, steps=[
    StepRef(name="a", step=touch, wiring={"out": "same.txt"}),
    StepRef(name="b", step=touch, wiring={"out": "same.txt"}),
    StepRef(name="t2", step=tool),
])
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def test_the_dry_run_json_lists_what_the_dry_run_warned_of(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    """Two steps writing one file and a program not there reached only stderr: a CI
    check reading the plan could see neither."""
    path = recipe_file(DUP, "dup.py")
    proc = ninja("run", f"{path}:dup", "--dryrun", "--json", "-j", "2")
    assert proc.returncode == 0, proc.stderr
    warnings = json.loads(proc.stdout)["warnings"]
    assert any("'a' and 'b' both write" in w for w in warnings), warnings
    assert any("'t2'" in w and "./build/tool" in w for w in warnings), warnings
    printed = [line.removeprefix("ninja: warning: ") for line in proc.stderr.splitlines()]
    assert set(warnings) <= set(printed)


def test_a_dry_run_with_nothing_to_say_has_an_empty_list(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    path = recipe_file(
        DUP.replace(
            '"same.txt"}),\n    StepRef(name="b"', '"one.txt"}),\n    StepRef(name="b"'
        ).replace('    StepRef(name="t2", step=tool),\n', ""),
        "ok.py",
    )
    proc = ninja("run", f"{path}:dup", "--dryrun", "--json", "-j", "2")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["warnings"] == []


NESTED = """\
from shinobi.steps import Cab, Recipe
t = Cab(name="t", command="true")
inner = Recipe("inner")
inner.add_step("a", t)
outer = Recipe("outer")
outer.add_step("sub", inner)
"""


def test_a_nested_recipe_has_no_backend_in_the_plan_as_in_the_run(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    """The dry run said backend "recipe" (a box tagged ``recipe · recipe``) where the
    run's JSON says null: its steps have backends, it has none."""
    path = recipe_file(NESTED, "nested.py")
    planned = json.loads(ninja("run", f"{path}:outer", "--dryrun", "--json").stdout)
    ran = json.loads(ninja("run", f"{path}:outer", "--json").stdout)
    assert [s["backend"] for s in planned["steps"]] == [s["backend"] for s in ran["steps"]]
    assert planned["steps"][0]["backend"] is None
    drawn = ninja("run", f"{path}:outer", "--dryrun").stdout
    assert "recipe · recipe" not in drawn and " recipe ─┐" in drawn


HARVESTS = """\
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class I(BaseModel):
    tag: str

class O(BaseModel):
    imgs: list[File] = []

make = ["sh", "-c", 'echo "$0" > "img-$0-1.fits"']
wide = Cab("wide", make, I, O, {"tag": ParamMeta(positional=True),
                                "imgs": ParamMeta(harvest="img-*.fits")})
own = Cab("own", make, I, O, {"tag": ParamMeta(positional=True),
                              "imgs": ParamMeta(harvest="img-{tag}-*.fits")})
r = Recipe("r")
r.add_step("a", wide, tag="a")
r.add_step("b", own, tag="b")
"""


def test_a_harvest_that_takes_an_unordered_step_s_files_is_warned_of(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    """``a`` harvests ``img-*.fits``, ``b`` writes ``img-b-1.fits``, nothing orders them:
    at -j 1 ``a`` collected its own file, at -j 2 ``b``'s too, without a word."""
    path = recipe_file(HARVESTS, "hv.py")
    said = "step 'a' harvests"
    planned = ninja("run", f"{path}:r", "--dryrun")
    assert said in planned.stderr and "nothing orders the two" in planned.stderr
    ran = ninja("run", f"{path}:r", "-j", "2", env={"SHINOBI_CACHE_ENABLED": "0"})
    assert ran.returncode == 0 and said in ran.stderr, ran.stderr


def test_the_dry_run_counts_the_steps_that_run_as_graph_does(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    """A nested recipe counted as a step of its own: "3 steps" where graph said 2."""
    path = recipe_file(
        NESTED.replace(
            'outer.add_step("sub", inner)', 'outer.add_step("sub", inner)\nouter.add_step("b", t)'
        ),
        "n.py",
    )
    drawn = ninja("run", f"{path}:outer", "--dryrun").stdout
    assert drawn.rstrip().endswith("2 steps; dry run: nothing was executed"), drawn
