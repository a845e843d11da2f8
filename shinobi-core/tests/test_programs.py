"""Tools the native steps name are looked for before a run (and in a dry run): a
missing one is said at the start, not hours later, and is not a refusal."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from shinobi.config import load_config
from shinobi.graph import build_graph
from shinobi.programs import missing_programs
from shinobi.runner import run_recipe
from shinobi.session import Session
from shinobi.steps import Cab, Recipe

Ninja = Callable[..., subprocess.CompletedProcess[str]]

MISSING = """
from shinobi.steps import Cab, Recipe
tool = Cab("tool", "no_such_tool_xyz --flag")
pipe = Recipe("pipe")
for name in ("a", "b"):
    pipe.add_step(name, tool)  # one warning for the program, naming its first step
pipe.add_step("fine", Cab("fine", "/bin/true"))
"""


def test_a_dry_run_says_which_program_is_missing_once(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(MISSING)
    for extra in ([], ["--json"]):
        shown = ninja("run", f"{path}:pipe", "--dryrun", *extra)
        assert shown.returncode == 0, shown.stderr
        warned = [line for line in shown.stderr.splitlines() if line.startswith("ninja: warning:")]
        assert warned == [
            "ninja: warning: step 'a' runs 'no_such_tool_xyz', which is not on PATH on this"
            " machine: the step will fail unless an earlier step provides it (install it, or"
            " give the step a backend that has it)"
        ]


def test_a_program_an_earlier_step_builds_is_warned_about_and_then_runs(tmp_path: Path) -> None:
    build = Cab(
        "build", ["/bin/sh", "-c", "printf '#!/bin/sh\\necho built\\n' > tool; chmod +x tool"]
    )
    recipe = Recipe("made")
    recipe.add_step("build", build)
    recipe.add_step("use", Cab("use", "./tool"))
    result = run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    assert result.ok, result.error
    # a relative path: said where it was looked for (where the steps run)
    assert [w for w in result.warnings if "'./tool'" in w and f"not in {tmp_path}" in w]
    assert result.steps[1].stdout == "built\n"


def test_steps_that_run_elsewhere_are_their_backends_to_check(tmp_path: Path) -> None:
    recipe = Recipe("elsewhere")
    recipe.add_step("boxed", Cab("boxed", "no_such_tool_xyz"), backend="docker")
    session = Session(config=load_config(), cwd=str(tmp_path))
    assert missing_programs(build_graph(recipe), session) == []
    here = Recipe("here")
    here.add_step("bare", Cab("bare", "no_such_tool_xyz"))
    assert len(missing_programs(build_graph(here), session)) == 1
