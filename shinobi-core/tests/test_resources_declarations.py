"""Every bad declaration of resources, scatter or loops stops ``ninja run`` before
anything runs: exit 2, one line naming the step (or loop) and the field."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Ninja = Callable[..., subprocess.CompletedProcess[str]]

HEAD = """
from pathlib import Path
from pydantic import BaseModel
import shinobi
from shinobi.steps import Cab, File, ParamMeta, Recipe
from shinobi.resources import Resources

class In(BaseModel):
    ms: str = "x.ms"
    cycle: int = 0
    xs: list[str] = ["a", "b"]
    ys: list[str] = ["c"]

class Out(BaseModel):
    ms: str | None = None
    converged: File | None = None

first = Cab("first", ["/bin/touch", "SOMETHING-RAN"])
tool = Cab("tool", ["/bin/touch", "SOMETHING-RAN"], In, Out)
recipe = Recipe("pipe", In)
recipe.add_step("first", first)
"""

CASES = {
    "cpus zero": (
        'recipe.add_step("big", tool, resources=Resources(cpus=0))',
        ["Resources(cpus=0)", "cpus must be a positive number or 'all'", 'add_step("big"'],
    ),
    "memory unit": (
        'recipe.add_step("big", tool, resources=Resources(memory="12 parsecs"))',
        ["Resources(memory='12 parsecs')", "unknown size unit 'parsecs'", 'add_step("big"'],
    ),
    "cab cpus": (
        'recipe.add_step("big", Cab("c", "true", resources=Resources(cpus="most")))',
        ["Resources(cpus='most')", 'add_step("big"'],
    ),
    "decorator cpus": (
        "@shinobi.step(tool, resources=Resources(cpus=-2))\ndef big(ctx):\n    return ctx.run()",
        ["Resources(cpus=-2)", "def big"],
    ),
    "resources not a Resources": (
        'recipe.add_step("big", tool, resources={"cpus": 2})',
        ["step 'big': resources must be Resources(cpus=..., memory=...), not dict"],
    ),
    "resources on a nested recipe": (
        'inner = Recipe("inner", In)\ninner.add_step("t", tool)\n'
        'recipe.add_step("branch", inner, resources=Resources(cpus=4))',
        ["step 'branch': resources are declared on a nested recipe"],
    ),
    "scatter unknown field": (
        'recipe.add_step("s", tool, scatter=["mss"], ms=recipe.inputs.xs)',
        ["step 's': scatter names 'mss', which is not an input of 'tool'; did you mean 'ms'?"],
    ),
    "scatter lengths": (
        'recipe.add_step("s", tool, scatter=["ms", "cycle"], ms=recipe.inputs.xs, cycle=[1, 2, 3])',
        [
            "step 's': scattered inputs must have the same length: ms has 2 (input 'xs'), cycle has 3"
        ],
    ),
    "scatter not a list": (
        'recipe.add_step("s", tool, scatter=["ms"], ms="one.ms")',
        ["step 's': scattered input 'ms' must be a list at run time, got str"],
    ),
    "loop until": (
        'recipe.add_loop("sc", tool, max_iter=3, until="done", carry={"ms": "ms"}, ms="x")',
        ["loop 'sc': until='done' is not an output of the body"],
    ),
    "loop carry fixed point": (
        'recipe.add_loop("sc", tool, max_iter=3, until="converged", carry={"converged": "ms2"},'
        ' ms="x")',
        ["loop 'sc': carry feeds 'ms2', which is not an input of the body"],
    ),
    "loop carry not explicit": (
        'recipe.add_loop("sc", tool, max_iter=3, until="converged", carry="ms", ms="x")',
        ["loop 'sc': carry must map a body output to the body input it feeds"],
    ),
    "loop body scatter": (
        'body = Recipe("body", In, Out)\nbody.add_step("t", tool, scatter=["ms"], ms=body.inputs.xs)\n'
        'body.set_output("ms", body.outputs.t.ms)\nbody.set_output("converged", body.outputs.t.converged)\n'
        'recipe.add_loop("sc", body, max_iter=3, until="converged", ms="x")',
        ["loop 'sc': body step 't' scatters"],
    ),
    "loop body nested recipe": (
        'inner = Recipe("inner", In, Out)\ninner.add_step("t", tool)\n'
        'inner.set_output("ms", inner.outputs.t.ms)\ninner.set_output("converged", inner.outputs.t.converged)\n'
        'body = Recipe("body", In, Out)\nbody.add_step("deeper", inner)\n'
        'body.set_output("ms", body.outputs.deeper.ms)\nbody.set_output("converged", body.outputs.deeper.converged)\n'
        'recipe.add_loop("sc", body, max_iter=3, until="converged", ms="x")',
        ["loop 'sc': body step 'deeper' is a nested recipe or loop"],
    ),
    "loop max_iter": (
        'recipe.add_loop("sc", tool, max_iter=0, until="converged", ms="x")',
        ["loop 'sc': max_iter must be a whole number >= 1, not 0"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_declaration_exits_2_before_anything_runs(
    case: str, ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    tail, expected = CASES[case]
    recipe_file(HEAD + tail + "\n")
    done = ninja("run", "recipe.py:recipe")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("ninja: error: ") and done.stderr.count("\n") == 1, done.stderr
    for words in expected:
        assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "SOMETHING-RAN").exists()
