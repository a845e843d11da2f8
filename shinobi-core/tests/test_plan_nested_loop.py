"""A loop directly inside a loop's body, whose output is the outer until, is refused.

Tracing the outer loop's until output through the body took every body step
for a plain step, so a loop there raised an internal error (exit 70) before
the nested-loop refusal was reached.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process
from pydantic import BaseModel

from shinobi.errors import RecipeGraphError
from shinobi.graph import build_graph
from shinobi.steps import Cab, File, ParamMeta, Recipe

REFUSAL = (
    "loop 'outer': body step 'inner' is a nested recipe or loop; a loop body may contain only"
    " cabs and pysteps"
)

SOURCE = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    x: int = 0

class Out(BaseModel):
    flag: File | None = None

body = Cab("body", ["true"], In, Out, {"flag": ParamMeta(implicit="f.flag")})
cycle = Recipe("cycle", In, Out)
inner = cycle.add_loop("inner", body, max_iter=2, until="flag")
cycle.set_output("flag", inner.outputs.flag)
pipe = Recipe("pipe", In, Out)
outer = pipe.add_loop("outer", cycle, max_iter=2, until="flag")
pipe.set_output("flag", outer.outputs.flag)
"""


class In(BaseModel):
    x: int = 0


class Out(BaseModel):
    flag: File | None = None


def _pipe() -> Recipe:
    body = Cab("body", ["true"], In, Out, {"flag": ParamMeta(implicit="f.flag")})
    cycle = Recipe("cycle", In, Out)
    inner = cycle.add_loop("inner", body, max_iter=2, until="flag")
    cycle.set_output("flag", inner.outputs.flag)
    pipe = Recipe("pipe", In, Out)
    outer = pipe.add_loop("outer", cycle, max_iter=2, until="flag")
    pipe.set_output("flag", outer.outputs.flag)
    return pipe


def test_a_loop_in_a_loop_body_feeding_the_until_is_refused() -> None:
    with pytest.raises(RecipeGraphError) as caught:
        build_graph(_pipe())
    assert str(caught.value).endswith(REFUSAL)


def test_the_dry_run_refuses_it_in_one_line_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "nested.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(capsys, "run", "nested.py:pipe", "--dryrun")
    assert code == 2
    assert err.strip() == f"ninja: error: recipe 'pipe', {REFUSAL}"
