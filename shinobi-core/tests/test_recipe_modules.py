"""Recipe modules by name: a multiprocessing worker (spawn, forkserver) finds the file."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_venv_fixtures import made_venv

from shinobi.recipe_modules import PREFIX, module_name, path_of

__all__ = ["made_venv"]

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def test_the_name_says_which_file_even_with_odd_bytes(tmp_path: Path) -> None:
    odd = tmp_path / os.fsdecode(b"sp ace \xc3\xbc \xff.py")  # not even UTF-8
    odd.write_text("x = 1\n")
    name = module_name(odd)
    assert name.startswith(PREFIX) and name.isascii() and name.isprintable()
    assert path_of(name) == str(odd.resolve())
    assert path_of("shinobi.recipe_modules.fzz") is None and path_of("json") is None


def test_a_fresh_interpreter_imports_a_recipe_module_by_its_name(tmp_path: Path) -> None:
    """What a spawned worker does when it unpickles the function it is to run."""
    recipe = tmp_path / "a recipe.py"
    recipe.write_text("def square(x):\n    return x * x\n")
    code = f"import importlib; print(importlib.import_module({module_name(recipe)!r}).square(7))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (0, "49\n"), done.stderr


POOLED = """
import multiprocessing

from pydantic import BaseModel

import shinobi
from shinobi.steps import Recipe


def square(x: int) -> int:
    return x * x


class Total(BaseModel):
    total: int


@shinobi.pystep
def crunch(method: str) -> Total:
    with multiprocessing.get_context(method).Pool(2) as pool:
        return Total(total=sum(pool.map(square, range(5))))


def pooled(name: str, **where: str) -> Recipe:
    recipe = Recipe(name, outputs_model=Total)
    recipe.add_step("crunch", crunch, **where)
    recipe.set_output("total", recipe.outputs.crunch.total)
    return recipe


spawned = pooled("spawned", method="spawn")
served = pooled("served", method="forkserver")
"""


@pytest.mark.parametrize("target", ["spawned", "served"])
def test_a_pystep_s_multiprocessing_pool_runs_under_spawn_and_forkserver(
    ninja: Ninja, recipe_file: Callable[..., Path], target: str
) -> None:
    """The workers could not import the recipe's function, died, and the pool
    waited for them forever: ninja hung, and ignored Ctrl-C."""
    path = recipe_file(POOLED)
    done = ninja("run", f"{path}:{target}", "--no-cache", "--json", timeout=90)
    assert done.returncode == 0, done.stderr
    assert '"total": 30' in done.stdout


def test_a_pystep_s_pool_runs_in_a_venv_too(
    ninja: Ninja, recipe_file: Callable[..., Path], made_venv: Path
) -> None:
    """The pystep runner's workers re-import the runner, not ninja: the name still finds it."""
    path = recipe_file(
        POOLED + f"in_venv = pooled('in_venv', method='spawn', venv={str(made_venv)!r})\n"
    )
    done = ninja("run", f"{path}:in_venv", "--no-cache", "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"total": 30' in done.stdout
