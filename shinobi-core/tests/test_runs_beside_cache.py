"""A step that ran while another run of its workdir went on does not store its result.

Two runs of different recipes writing one file overlapped: the run started
second was warned, the one started first was not, and its step stored the
other recipe's product in the step cache as its own, which later runs of
its recipe were handed, cached and exit 0.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import _ninja
from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe

BESIDE = "another run of this workdir"


class _In(BaseModel):
    live: str


def _recipe(script: str) -> Recipe:
    """One step: ``script`` (sh, given the marker folder as $0), then it writes out.txt."""
    step = Cab(
        name="make",
        command=["sh", "-c", script + "; echo made > out.txt"],
        inputs_model=_In,
        field_meta={"live": ParamMeta(positional=True)},
    )
    recipe = Recipe("r")
    recipe.add_step("make", step, live=".shinobi/live")
    return recipe


def _twice(recipe: Recipe, cwd: Path) -> tuple[list[str], str]:
    """Run ``recipe`` twice; the first run's warnings, and the second's step status."""
    first = run_recipe(recipe, cwd=cwd)
    assert first.ok, first.error
    second = run_recipe(recipe, cwd=cwd)
    assert second.ok, second.error
    return first.warnings, second.steps[0].status


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SHINOBI_CONFIG", os.devnull)


@pytest.fixture
def other_ninja() -> object:
    """A live process standing for the other run's ninja."""
    sleeper = subprocess.Popen(["sleep", "60"])
    yield sleeper.pid
    sleeper.kill()
    sleeper.wait()


def test_a_run_started_while_the_step_ran_keeps_it_out_of_the_cache(
    tmp_path: Path, cache: None, other_ninja: int
) -> None:
    # the step itself starts "another run": its marker appears while the step runs
    recipe = _recipe(f'touch "$0/{other_ninja}-x.20990101-000000-abcdef"')
    warnings, again = _twice(recipe, tmp_path)
    assert any(BESIDE in w and "20990101-000000-abcdef" in w for w in warnings), warnings
    assert again == "ok"  # run again, not handed from the cache


#: Another recipe, for a real run the step starts beside its own.
OTHER = """
from shinobi.steps import Cab, Recipe
quick = Recipe("quick")
quick.add_step("q", Cab(name="q", command="true"))
"""


def test_a_run_that_started_and_ended_during_the_step_keeps_it_out_too(
    tmp_path: Path, cache: None
) -> None:
    (tmp_path / "other.py").write_text(OTHER)
    ninja = " ".join(shlex.quote(word) for word in _ninja())
    recipe = _recipe(f"{ninja} run other.py:quick >/dev/null 2>&1")
    warnings, again = _twice(recipe, tmp_path)
    assert any(BESIDE in w and "ended since" in w for w in warnings), warnings
    assert again == "ok"


def test_a_run_of_another_directory_sharing_the_workdir_is_no_matter(
    tmp_path: Path, cache: None, other_ninja: int
) -> None:
    """One ``execution.workdir`` may serve many projects: a run whose steps write
    elsewhere is neither warned of nor keeps results out of the cache."""
    marker = f'"$0/{other_ninja}-x.20990101-000000-abcdef"'
    recipe = _recipe(f"printf 'here\\n/some/other/project' > {marker}")
    warnings, again = _twice(recipe, tmp_path)
    assert not any(BESIDE in w for w in warnings), warnings
    assert again == "cached"


def test_a_step_with_no_run_beside_it_is_cached(tmp_path: Path, cache: None) -> None:
    warnings, again = _twice(_recipe("true"), tmp_path)
    assert not any(BESIDE in w for w in warnings), warnings
    assert again == "cached"
