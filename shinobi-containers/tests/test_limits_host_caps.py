"""Declared limits the host cannot take as written, live on every engine.

* More CPUs than the host has: natively the step runs (core warns and runs it
  alone), but docker and apptainer refused to start the container at all.
  ``--cpus`` is now capped at the host's CPUs for a run here.
* A value the kernel refuses (a memory limit below what the container uses
  to start, a CPU quota under a millisecond) was explained as a cgroup
  controller "not available to this user", with a remedy that cannot help.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend

from recipes import config_for, one_step
from shinobi.resources import Resources
from shinobi.runner import run_recipe
from shinobi_containers.limits import LimitFlags, within_host


def test_a_cpu_limit_beyond_the_host_is_capped_at_the_host() -> None:
    asked = LimitFlags(flags=("--cpus", "3", "--memory", "64"), memory=64, cpus=3.0)
    capped = within_host(asked, 2)
    assert capped.flags == ("--cpus", "2", "--memory", "64") and capped.cpus == 2.0
    assert within_host(asked, 4) is asked


@pytest.mark.parametrize("engine", ENGINES)
def test_a_step_declaring_more_cpus_than_the_host_has_still_runs(
    engine: str, tmp_path: Path
) -> None:
    live_backend(engine)
    more = len(os.sched_getaffinity(0)) + 1
    recipe = one_step("wide", "true", image(engine), Resources(cpus=more))
    result = run_recipe(
        recipe, backend=engine, config=config_for(engine), cwd=tmp_path, use_cache=False
    )
    assert result.ok, result.steps[0].error


@pytest.mark.parametrize(
    ("engine", "resources"),
    [("docker", Resources(cpus=0.001)), ("podman", Resources(memory="1MiB"))],
)
def test_a_limit_value_the_kernel_refuses_is_not_blamed_on_delegation(
    engine: str, resources: Resources, tmp_path: Path
) -> None:
    live_backend(engine)
    recipe = one_step("tiny", "true", image(engine), resources)
    result = run_recipe(
        recipe, backend=engine, config=config_for(engine), cwd=tmp_path, use_cache=False
    )
    error = result.steps[0].error or ""
    assert "refused the value of the declared limit" in error, error
    assert "not available to this user" not in error and "enforce_resources" not in error
