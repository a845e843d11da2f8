"""A dry run warns of a step no program could be started for, as the run fails it.

A value holding a NUL byte (read from a header, joined by code) was drawn in
the step's box as ``$'x\\x00y'`` and nothing more: the check a user makes
before a long run said all was well, and the run then failed the step.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

RECIPE = """\
from pydantic import BaseModel
from shinobi import Recipe
from shinobi.steps import Cab, ParamMeta

class In(BaseModel):
    word: str

class Out(BaseModel):
    pass

say = Cab(name="say", command="echo", inputs_model=In, outputs_model=Out,
          field_meta={"word": ParamMeta(positional=True)})

r = Recipe("r", In, Out)
r.add_step("plain", say, word=r.inputs.word)
r.add_step("broken", say, word="x" + chr(0) + "y")
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]
SAID = (
    "step 'broken': cannot run 'echo': argument 1 contains a NUL byte, which no program"
    " can be passed (check its value); the run would fail this step"
)


def test_the_dry_run_names_the_step_and_argument_the_run_would_fail(
    ninja: Ninja, recipe_file: Callable[[str, str], Path]
) -> None:
    path = recipe_file(RECIPE, "r.py")
    dry = ninja("run", f"{path}:r", "--word", "Ω-field", "--dryrun")
    assert dry.returncode == 0, dry.stderr
    warned = [line for line in dry.stderr.splitlines() if line.startswith("ninja: warning: ")]
    assert warned == [f"ninja: warning: {SAID}"]  # a non-ASCII word that can pass is not named
    as_json = ninja("run", f"{path}:r", "--word", "a", "--dryrun", "--json")
    assert json.loads(as_json.stdout)["warnings"] == [SAID]
    run = ninja("run", f"{path}:r", "--word", "a", "--no-cache")
    assert run.returncode != 0
    assert "step 'broken' failed: cannot run 'echo': argument 1 contains a NUL byte" in run.stderr
