"""``ninja run --backend slurm``: a cab's ``env`` reaches its tool, and only its tool.

The job script used to set it with ``export K=V`` lines, so a name that is
no shell identifier (``MY-DASH``) made bash complain and was dropped, and a
cab's ``PATH`` applied to the script's own commands too. Now the tool runs
as ``env K=V tool``, the form compiled jobs use.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from conftest import Ninja

from shinobi.backends.base import Invocation
from shinobi_slurm.backend import SlurmBackend
from shinobi_slurm.sbatch import command_lines, with_environment

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    out: str

dump = Cab(
    "dump",
    # python, not sh: dash itself drops MY-DASH from what it runs, ninja or not
    ["/usr/bin/python3", "-c", "import os, sys; open(sys.argv[1], 'w').write(repr(dict(os.environ)))"],
    In,
    None,
    {"out": ParamMeta(positional=True)},
    env={"MY-DASH": "dashed $HOME 'x'", "MY_VAR": "a b", "PATH": "/nowhere/bin"},
)
r = Recipe("r", In)
r.add_step("dump", dump, out=r.inputs.out)
"""


def _invocation(tmp_path: Path, argv: tuple[str, ...], env: dict[str, str]) -> Invocation:
    return Invocation(step="dump", argv=argv, cwd=str(tmp_path), env=env, run_id="r1")


def test_the_script_runs_the_tool_under_env_not_export_lines(tmp_path: Path) -> None:
    env = {"MY-DASH": "dashed $HOME 'x'", "PATH": "/nowhere/bin"}
    script = SlurmBackend({}).script(_invocation(tmp_path, ("/usr/bin/env",), env), "o", "e")
    assert "export " not in script
    assert (
        "\nexec env -- 'MY-DASH=dashed $HOME '\"'\"'x'\"'\"'' PATH=/nowhere/bin /usr/bin/env\n"
        in script
    )


def test_the_dry_run_rendering_shows_the_environment_too(tmp_path: Path) -> None:
    argv = SlurmBackend({}).render(_invocation(tmp_path, ("tool", "x"), {"MY-DASH": "1"}))
    assert argv[-1] == "exec env -- MY-DASH=1 tool x"


def test_a_program_whose_path_holds_an_equals_sign_is_not_read_as_a_variable(
    tmp_path: Path,
) -> None:
    tool = tmp_path / "a=b" / "tool"
    tool.parent.mkdir()
    tool.write_text('#!/usr/bin/python3\nimport os\nprint(os.environ["MY-DASH"])\n')
    tool.chmod(0o755)
    lines = command_lines(with_environment((str(tool),), {"MY-DASH": "v"}))
    done = subprocess.run(["bash", "-c", "\n".join(lines)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "v\n"


@pytest.mark.usefixtures("slurm")
def test_a_dashed_variable_reaches_the_tool_and_path_only_the_tool(
    ninja: Ninja, tmp_path: Path
) -> None:
    (tmp_path / "envr.py").write_text(RECIPE)
    out = tmp_path / "seen env.txt"
    done = ninja("run", "envr.py:r", "--out", str(out), "--backend", "slurm")
    assert done.returncode == 0, done.stderr
    assert "not a valid identifier" not in done.stderr
    environ = ast.literal_eval(out.read_text())
    assert environ["MY-DASH"] == "dashed $HOME 'x'"
    assert environ["MY_VAR"] == "a b"
    assert environ["PATH"] == "/nowhere/bin"
