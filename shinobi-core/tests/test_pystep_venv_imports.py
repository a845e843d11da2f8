"""A pystep in another interpreter borrows from ninja's environment only what the runner needs.

The runner used to append ninja's whole site directories to the step's
``sys.path`` whenever the interpreter lacked shinobi or pydantic, so a
function importing a package the venv lacks (click) silently got ninja's.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from shinobi.pyrunner import RUNNER
from shinobi.pyrunner.request import _NEEDED, core_paths

STEP = """
import sys

def f() -> str:
    try:
        import click
    except ModuleNotFoundError as exc:
        return "missing " + str(exc.name)
    return "found " + click.__file__
"""


def _run_bare(tmp_path: Path, spec_extra: dict[str, Any]) -> dict[str, Any]:
    """The runner under this Python with no site directory (-S): like a bare venv."""
    (tmp_path / "steps.py").write_text(STEP)
    spec = {
        "module_file": str(tmp_path / "steps.py"),
        "module_name": "steps",
        "import_root": str(tmp_path),
        "qualname": "f",
        "inputs": {},
        "outputs_file": str(tmp_path / "out.json"),
        "core_paths": core_paths(),
        "core_python": list(sys.version_info[:2]),
        **spec_extra,
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    subprocess.run([sys.executable, "-I", "-S", RUNNER, str(tmp_path / "spec.json")], check=False)
    found: dict[str, Any] = json.loads((tmp_path / "out.json").read_text())
    return found


def test_a_package_the_interpreter_lacks_is_not_lent_from_ninja_s_site(tmp_path: Path) -> None:
    import click  # ninja has it: the step must not

    assert click.__file__
    done = _run_bare(tmp_path, {"core_modules": list(_NEEDED)})
    assert done.get("outputs") == {"result": "missing click"}, done


def test_the_names_lent_cover_pydantic_s_own_requirements() -> None:
    """pydantic's runtime requirements (its metadata), as module names, are all lent."""
    required = importlib.metadata.requires("pydantic") or []
    names = {
        re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].strip().lower().replace("-", "_")
        for r in required
        if "extra ==" not in r
    }
    assert names <= set(_NEEDED), names - set(_NEEDED)
