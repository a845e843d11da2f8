"""A recipe goes to a process pool: it pickles, pysteps and models it made itself included.

``ProcessPoolExecutor().submit(run_recipe, recipe)`` pickles the recipe. A
pystep could not be pickled ("not the same object as module.name": the
decorator stands where the function was), nor a recipe declared without a
model (its empty model was made at run time, under no importable name).
"""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import shinobi
from shinobi.runner import run_recipe
from shinobi.steps import Recipe


@shinobi.pystep
def plus_one(n: int = 3) -> int:
    return n + 1


def _recipe() -> Recipe:
    recipe = Recipe("pooled")  # no models: made empty
    recipe.add_step("p", plus_one, n=4)
    return recipe


def test_a_recipe_with_a_pystep_and_no_models_pickles() -> None:
    recipe = _recipe()
    back = pickle.loads(pickle.dumps(recipe))
    assert back.steps[0].step is plus_one
    assert back.inputs_model is recipe.inputs_model


def test_a_process_pool_runs_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        result = pool.submit(run_recipe, _recipe(), use_cache=False).result(timeout=120)
    assert result.ok, result.error
    assert result.steps[0].outputs == {"result": 5}
