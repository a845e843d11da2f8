"""Declarations the venv backend and the budget took silently, then failed on late.

``Resources(memory=16)`` was 16 bytes (a container refused it mid-run, Slurm
made it ``--mem=1M``); the configuration already refused such a budget.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi.resources import Resources

Ninja = Callable[..., subprocess.CompletedProcess[str]]


@pytest.mark.parametrize("memory", [16, "1.5", 1.5, "1KB", 1024**2 - 1])
def test_a_memory_written_without_its_unit_is_refused(memory: object) -> None:
    with pytest.raises(ValueError, match="too small to be meant") as caught:
        Resources(memory=memory)  # type: ignore[arg-type]
    assert f"Resources(memory={memory!r})" in str(caught.value)
    assert "write the unit" in str(caught.value)


@pytest.mark.parametrize("memory", [1024**2, "1MiB", "1.5MiB", "64GiB"])
def test_a_memory_of_a_mib_or_more_is_taken(memory: object) -> None:
    assert Resources(memory=memory).memory is not None  # type: ignore[arg-type]


def test_a_unitless_memory_stops_the_run_where_it_is_declared(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    recipe_file(
        """
        from shinobi.steps import Cab, Recipe
        from shinobi.resources import Resources
        recipe = Recipe("pipe")
        recipe.add_step("big", Cab("t", ["/bin/touch", "RAN"]), resources=Resources(memory=16))
        """
    )
    done = ninja("run", "recipe.py:recipe", "--dry-run")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1, done.stderr
    assert "16 bytes is too small to be meant" in done.stderr
    assert 'add_step("big"' in done.stderr
    assert "mem=16B" not in done.stdout
