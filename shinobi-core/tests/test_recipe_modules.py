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


def test_the_name_is_readable_and_finds_the_file_on_the_path_even_with_odd_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    odd = tmp_path / os.fsdecode(b"sp ace.\xc3\xbc \xff.py")  # not even UTF-8
    odd.write_text("x = 1\n")
    other = tmp_path / "b" / odd.name  # the same stem elsewhere: another name
    other.parent.mkdir()
    other.write_text("x = 2\n")
    name = module_name(odd)
    assert name.startswith(PREFIX) and "." not in name[len(PREFIX) :]
    assert name[len(PREFIX) :].startswith("sp_ace_\u00fc__")  # the stem, readable
    assert module_name(other) != name
    assert path_of(name) is None  # not on sys.path: a worker's path holds the recipe's folder
    monkeypatch.syspath_prepend(str(other.parent))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert path_of(name) == str(odd.resolve()) and path_of(module_name(other)) == str(other)
    assert path_of(f"{PREFIX}nothing_0123456789ab") is None and path_of("json") is None


def test_a_fresh_interpreter_imports_a_recipe_module_by_its_name(tmp_path: Path) -> None:
    """What a spawned worker does when it unpickles the function it is to run (its
    parent's path, which holds the recipe's folder, comes with it)."""
    recipe = tmp_path / "a recipe.py"
    recipe.write_text("def square(x):\n    return x * x\n")
    code = (
        f"import sys, importlib; sys.path.append({str(tmp_path)!r});"
        f" print(importlib.import_module({module_name(recipe)!r}).square(7))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (0, "49\n"), done.stderr


def test_a_relative_import_in_a_recipe_file_is_a_script_s(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    """Its module bears shinobi.recipe_modules' name only to be found: `from . import`
    must not look there (nor `from .. import loaders` reach shinobi's own)."""
    recipe_file("x = 1\n", "helper.py")
    path = recipe_file("from . import helper\nfrom shinobi.steps import Recipe\nr = Recipe('r')\n")
    done = ninja("run", f"{path}:r")
    assert done.returncode == 2
    assert "attempted relative import with no known parent package" in done.stderr
    assert "shinobi.recipe_modules" not in done.stderr


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
