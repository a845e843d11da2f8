"""What ``ninja graph`` and ``ninja run --json`` print for tools.

``--json`` of a run must carry what the dry run showed (each slice's command
line, a nested recipe's steps), and ``graph --format dot`` must draw names
the way Graphviz reads them.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi.cli.main import main

Ninja = Callable[..., subprocess.CompletedProcess[str]]

RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class TouchIn(BaseModel):
    out: Path

class TouchOut(BaseModel):
    out: Path | None = None

class In(BaseModel):
    outs: list[Path] = [Path("a b"), Path("c")]
    one: Path = Path("one")

touch = Cab("touch", "/bin/touch", TouchIn, TouchOut, {"out": ParamMeta(positional=True)})

inner = Recipe("inner", In, TouchOut)
inner.add_step("make", touch, out=inner.inputs.one)
inner.set_output("out", inner.outputs.make.out)

pipe = Recipe("pipe", In)
pipe.add_step("étalonnage", touch, scatter=["out"], out=pipe.inputs.outs)
pipe.add_step("sub", inner, one=pipe.inputs.one)

single = Recipe("single", In)
single.add_step("make", touch, out=single.inputs.one)
"""


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "recipe.py"
    path.write_text(textwrap.dedent(RECIPE))
    return path


def test_dot_writes_non_ascii_names_as_they_are(
    recipe: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """DOT has no \\uXXXX escape: Graphviz would draw the escape itself."""
    main(["graph", f"{recipe}:pipe", "--format", "dot"])
    out = capsys.readouterr().out
    assert '"étalonnage" [label="étalonnage\\n[scatter out]"]' in out
    assert "\\u00e9" not in out


def test_a_one_step_dry_run_says_step_not_steps(
    recipe: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    main(["run", f"{recipe}:single", "--dryrun"])
    assert "\n1 step; dry run: nothing was executed" in capsys.readouterr().out


def test_run_json_carries_the_slices_and_nested_steps_the_dry_run_shows(
    recipe: Path, ninja: Ninja
) -> None:
    dry = ninja("run", f"{recipe}:pipe", "--dryrun", "--json")
    ran = ninja("run", f"{recipe}:pipe", "--json")
    assert dry.returncode == 0 and ran.returncode == 0, ran.stderr
    planned = {s["name"]: s for s in json.loads(dry.stdout)["steps"]}
    result = {s["name"]: s for s in json.loads(ran.stdout)["steps"]}

    def argvs(step: dict[str, object]) -> list[object]:
        return [s["argv"] for s in step["slices"]]  # type: ignore[attr-defined]

    assert argvs(result["étalonnage"]) == argvs(planned["étalonnage"])
    assert argvs(result["étalonnage"]) == [["/bin/touch", "a b"], ["/bin/touch", "c"]]
    assert [s["status"] for s in result["étalonnage"]["slices"]] == ["ok", "ok"]
    inner = result["sub"]["steps"]
    assert [s["argv"] for s in inner] == [["/bin/touch", "one"]]
