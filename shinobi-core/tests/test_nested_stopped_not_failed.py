"""A nested recipe stopped because a sibling step failed is stopped, not failed.

Its scattered step was stopped after one slice when ``bad`` failed beside
it, and the recipe then called itself failed with that step's words: being
declared first, it was the run's reported failure ("step 'A' failed: ...
stopped after 1 of 3 slices, as the run did") and ``bad``'s exit 3 was
never named.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class SleepIn(BaseModel):
    t: float
    code: int = 0


def test_the_step_that_failed_is_the_runs_failure(tmp_path: Path) -> None:
    sleeper = Cab(
        "sleeper",
        ["sh", "-c", 'sleep "$0"; echo "said $1" >&2; exit "$1"'],
        SleepIn,
        None,
        {"t": ParamMeta(positional=True), "code": ParamMeta(positional=True)},
    )
    inner = Recipe("A")
    inner.add_step("sc", sleeper, scatter=["t"], t=[0.5, 0.5, 0.5])
    top = Recipe("top", max_workers=2)
    top.add_step("A", inner)
    top.add_step("bad", sleeper, t=0.1, code=3)
    result = run_recipe(top, cwd=tmp_path, use_cache=False)
    assert result.status == "failed"
    assert result.failed_step == "bad"
    assert result.error == "exited with code 3: said 3"
    (nested, bad) = result.steps
    assert (nested.status, bad.status) == ("cancelled", "failed")
