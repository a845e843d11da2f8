"""The run manifest records the venv a step ran in, and that venv's Python.

A pystep with ``venv=`` and a cab on the venv backend ran under a venv the
manifest did not name: which installation ran was not on record.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

RECIPE = """
import shinobi
from shinobi import Recipe
from shinobi.steps import Cab


@shinobi.pystep(venv="ve")
def doubled(x: int = 2) -> int:
    return 2 * x


recipe = Recipe("r")
recipe.add_step("py", doubled)
recipe.add_step("cab", Cab("c", command="python3 -c pass"), venv="ve")
recipe.add_step("here", Cab("n", command="true"))
"""


def test_the_manifest_names_each_step_s_venv_and_its_python(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    tmp_path: Path,
) -> None:
    recipe_file(RECIPE)
    venv = tmp_path / "ve"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    done = ninja("run", "--provenance", "recipe.py:recipe")
    assert done.returncode == 0, done.stderr
    (run,) = (tmp_path / ".shinobi" / "runs").iterdir()
    steps = {s["name"]: s for s in json.loads((run / "manifest.json").read_text())["steps"]}
    python = ".".join(map(str, sys.version_info[:3]))
    for name in ("py", "cab"):
        assert steps[name]["backend"] == "venv"
        assert (steps[name]["venv"], steps[name]["venv_python"]) == (str(venv), python)
    assert (steps["here"]["venv"], steps["here"]["venv_python"]) == (None, None)
