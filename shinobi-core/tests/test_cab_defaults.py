"""A cab input's default that its field's type refuses: the dry run and the run agree.

pydantic hands a default over unchecked, so ``niter: int = 2.5`` reached the
tool as ``2.5`` and the run exited 0, while the dry run (which hands defaults
over as values) refused it; and the dry run refused ``niter: int = None``,
the common "not given" idiom, which the run took. Now both take a None
default and both refuse any other default the type refuses, before any tool
starts, in the same words.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process
from pydantic import BaseModel

from shinobi.errors import UsageError
from shinobi.graph import build_graph
from shinobi.plan import plan_graph, validate_inputs
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe

REFUSED = (
    "step 'image': input 'niter': Input should be a valid integer, got a number with a"
    " fractional part (got 2.5)"
)


class BadIn(BaseModel):
    niter: int = 2.5  # type: ignore[assignment]
    gain: float = "0,1"  # type: ignore[assignment]


class NoneIn(BaseModel):
    niter: int = None  # type: ignore[assignment]


class Marker(BaseModel):
    mark: Path = Path("ran.txt")


def _touch() -> Cab:
    return Cab("touch", "touch", Marker, BaseModel, {"mark": ParamMeta(positional=True)})


def _recipe(inputs_model: type[BaseModel]) -> Recipe:
    recipe = Recipe("r", BaseModel, BaseModel)
    recipe.add_step("first", _touch())  # would run before the step with the bad default
    recipe.add_step("image", Cab("imager", "echo", inputs_model, BaseModel))
    return recipe


def test_the_run_refuses_a_bad_default_before_any_tool_starts(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        run_recipe(_recipe(BadIn), cwd=tmp_path, use_cache=False)
    assert str(caught.value) == f"recipe 'r', {REFUSED}"
    assert not (tmp_path / "ran.txt").exists()


def test_the_dry_run_plan_says_the_same(tmp_path: Path) -> None:
    plan = plan_graph(build_graph(_recipe(BadIn)), {}, str(tmp_path))
    assert plan.steps[-1].error == REFUSED


def test_the_step_check_refuses_it_too() -> None:
    """What a step is checked with at its turn (and ``ctx.run()``), past the static check."""
    node = build_graph(_recipe(BadIn)).nodes[-1]
    with pytest.raises(ValueError, match=r"^step 'image': input 'niter': Input should be"):
        validate_inputs(node, {}, "step 'image'")


def test_a_default_given_a_value_is_not_used_so_not_refused() -> None:
    node = build_graph(_recipe(BadIn)).nodes[-1]
    made = validate_inputs(node, {"niter": 3, "gain": 0.1}, "step 'image'")
    assert made == {"niter": 3, "gain": 0.1}


def test_a_none_default_is_taken_by_the_dry_run_and_the_run(tmp_path: Path) -> None:
    recipe = _recipe(NoneIn)
    plan = plan_graph(build_graph(recipe), {}, str(tmp_path))
    assert [s.error for s in plan.steps] == [None, None]
    assert plan.steps[-1].argv == ["echo"]
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.status == "ok"
    assert result.steps[-1].details.get("argv", ["echo"]) == ["echo"]


def test_the_cli_dry_run_and_run_exit_2_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text(
        "from pydantic import BaseModel\n"
        "from shinobi.steps import Cab, Recipe\n"
        "class IIn(BaseModel):\n"
        "    niter: int = 2.5\n"
        "r = Recipe('r', BaseModel, BaseModel)\n"
        "r.add_step('image', Cab('imager', 'echo', IIn, BaseModel))\n"
    )
    for extra in ("--dryrun", "--no-cache"):
        code, _, err = in_process(capsys, "run", "r.py:r", extra)
        assert code == 2, err
        assert err.strip() == f"ninja: error: recipe 'r', {REFUSED}"
