"""A loop whose until path is handed to it, and that a Recipe body exposes
straight from its own input (``set_output("flag", body.inputs.flag)``).

No step "produces" that path, so nothing noted it before the run: a flag left
by an earlier run ended today's loop after its first cycle, and a loop that used
up max_iter without the flag was not warned about.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe

_WRITE = (
    "import sys; state, cycle, need, flag = sys.argv[1:];"
    " open(state, 'a').write(cycle + '\\n');"
    " int(cycle) >= int(need) and open(flag, 'w').write('y')"
)


class CycleIn(BaseModel):
    state: File
    cycle: int = 0
    need: int = 1
    flag: File


class CycleOut(BaseModel):
    state: File


cycle_cab = Cab(
    "cycle",
    [sys.executable, "-c", _WRITE],
    CycleIn,
    CycleOut,
    {n: ParamMeta(positional=True) for n in ("state", "cycle", "need", "flag")},
)


class BodyIn(BaseModel):
    state: File
    cycle: int = 0
    need: int = 1
    flag: File


class BodyOut(BaseModel):
    state: File
    flag: File | None = None


body = Recipe("body", BodyIn, BodyOut)
body.add_step(
    "work",
    cycle_cab,
    state=body.inputs.state,
    cycle=body.inputs.cycle,
    need=body.inputs.need,
    flag=body.inputs.flag,
)
body.set_output("state", body.outputs.work.state)
body.set_output("flag", body.inputs.flag)  # the path the loop is handed


class In(BaseModel):
    state: File = Path("state.txt")
    need: int = 3
    flag: File = Path("done.flag")


class Out(BaseModel):
    state: File


def _recipe() -> Recipe:
    recipe = Recipe("selfcal", In, Out)
    loop = recipe.add_loop(
        "loop",
        body,
        max_iter=5,
        until="flag",
        carry={"state": "state"},
        index_input="cycle",
        state=recipe.inputs.state,
        need=recipe.inputs.need,
        flag=recipe.inputs.flag,
    )
    recipe.set_output("state", loop.outputs.state)
    return recipe


def _cycles(tmp_path: Path) -> list[str]:
    return (tmp_path / "state.txt").read_text().split()


def test_a_handed_until_path_converges_where_the_body_writes_it(tmp_path: Path) -> None:
    result = run_recipe(_recipe(), cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert _cycles(tmp_path) == ["1", "2", "3"]


def test_a_flag_left_by_an_earlier_run_does_not_end_the_loop(tmp_path: Path) -> None:
    (tmp_path / "done.flag").write_text("yesterday")
    result = run_recipe(_recipe(), cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert _cycles(tmp_path) == ["1", "2", "3"]
    assert [s.status for s in result.steps][3:] == ["skipped", "skipped"]


def test_a_loop_that_never_writes_a_handed_path_is_warned_about(tmp_path: Path) -> None:
    result = run_recipe(_recipe(), {"need": 99}, cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert _cycles(tmp_path) == ["1", "2", "3", "4", "5"]
    assert any("ran all 5 iterations without converging" in w for w in result.warnings), (
        result.warnings
    )


def test_a_converged_loop_with_a_handed_path_is_not_warned_about(tmp_path: Path) -> None:
    result = run_recipe(_recipe(), {"need": 5}, cwd=tmp_path, use_cache=False)
    assert result.status == "ok", result.error
    assert _cycles(tmp_path) == ["1", "2", "3", "4", "5"]
    assert not any("without converging" in w for w in result.warnings), result.warnings
