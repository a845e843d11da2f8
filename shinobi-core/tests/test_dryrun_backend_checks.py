"""A dry run refuses what the run would refuse of a venv before its first step.

The venv backend checks, before anything runs, that each step's venv is there
and has the step's tool; ``--dryrun`` skipped those checks and said all was
well of a recipe the run then refused with exit 2. Engines' own checks (is
docker's daemon up?) stay the run's, so a dry run works where they are not.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

RECIPES = """
from shinobi import Recipe
from shinobi.steps import Cab

sortc = Cab("sortc", command="sort --version")
missing_tool = Recipe("missing_tool")
missing_tool.add_step("s", sortc, venv="ve")
no_venv = Recipe("no_venv")
no_venv.add_step("s", sortc, venv="nope")
bare = Recipe("bare")
bare.add_step("s", sortc)
"""


def test_a_dry_run_refuses_a_venv_that_is_not_there(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    tmp_path: Path,
) -> None:
    recipe_file(RECIPES)
    done = ninja("run", "recipe.py:no_venv", "--dryrun")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"ninja: error: step 's': the venv '{tmp_path / 'nope'}' does not exist; create it"
        f" with `python3 -m venv {tmp_path / 'nope'}`\n"
    )


def test_a_dry_run_refuses_a_tool_the_venv_lacks(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    tmp_path: Path,
) -> None:
    recipe_file(RECIPES)
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "ve")], check=True
    )
    done = ninja("run", "recipe.py:missing_tool", "--dryrun")
    assert done.returncode == 2, done.stderr
    assert "step 's': command 'sort' is not installed in the venv" in done.stderr
    ran = ninja("run", "recipe.py:missing_tool")
    assert ran.returncode == 2 and ran.stderr.splitlines()[-1] == done.stderr.splitlines()[-1]


def test_a_dry_run_says_what_the_venv_backend_would_warn_of(
    ninja: Callable[..., subprocess.CompletedProcess[str]], recipe_file: Callable[[str], Path]
) -> None:
    recipe_file(RECIPES)
    done = ninja("run", "recipe.py:bare", "--backend", "venv", "--dryrun")
    assert done.returncode == 0, done.stderr
    assert (
        "ninja: warning: step 's' selected the venv backend but no venv is declared" in done.stderr
    )
