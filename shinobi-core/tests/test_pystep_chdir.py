"""An in-process pystep that changes ninja's directory and leaves it so fails, and
the directory is put back.

It shares the directory with every step of the run: the next in-process step
wrote its file under ``sub/``, ninja looked for it in the run's directory, found
a stale one of the same name there and handed it on, exit 0.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shinobi.runner import run_recipe
from shinobi.steps import File, Recipe, pystep


@pystep
def go_sub() -> str:
    os.chdir("sub")
    return os.getcwd()


@pystep
def write_b() -> File:
    Path("b.txt").write_text("new\n")
    return Path("b.txt")


@pystep
def visit() -> str:
    os.chdir("sub")
    os.chdir("..")  # back before returning: nothing to say
    return "ok"


def test_a_directory_left_changed_fails_the_step_and_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.txt").write_text("stale\n")
    recipe = Recipe("r", max_workers=1)
    recipe.add_step("cd", go_sub)
    recipe.add_step("w", write_b)
    result = run_recipe(recipe, use_cache=False)
    assert not result.ok
    (cd,) = [s for s in result.steps if s.name == "cd"]
    assert cd.status == "failed"
    assert "changed ninja's working directory (to " in str(cd.error)
    assert os.getcwd() == str(tmp_path)
    assert (tmp_path / "b.txt").read_text() == "stale\n"  # w never ran on the wrong directory


def test_a_directory_changed_back_is_no_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    assert run_recipe(visit, use_cache=False).ok
