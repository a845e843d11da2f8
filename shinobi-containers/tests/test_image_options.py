"""An image name starting with ``-``.

Docker and podman put the image before the command on ``run``'s line, so
``image="--help"`` was read as their option: they printed their usage and
exited 0, and the step passed having run nothing (``-q`` made the command's
first word the image). Such a name is now refused before the run, like the
other names docker could only fail on. Apptainer is always given an absolute
path or a ``docker://`` URI, so ``-b.sif`` runs as the file it is.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from live_engines import OCI_ENGINES, image, live_backend

from recipes import config_for
from shinobi.backends.base import Invocation
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe
from shinobi_containers.docker import DockerBackend
from shinobi_containers.errors import ContainerRefused
from shinobi_containers.podman import PodmanBackend


def invocation(tmp_path: Path, image_name: str) -> Invocation:
    return Invocation(step="tool", argv=("sh", "-c", "true"), cwd=str(tmp_path), image=image_name)


@pytest.mark.parametrize("backend", [DockerBackend, PodmanBackend])
@pytest.mark.parametrize("name", ["--help", "-q", "-busybox:latest"])
def test_an_image_starting_with_a_dash_is_refused_naming_the_step(
    tmp_path: Path, backend: type[DockerBackend], name: str
) -> None:
    said = f"step 'tool': image {name!r} starts with '-', which"
    with pytest.raises(ContainerRefused, match=re.escape(said)) as caught:
        backend({}).render(invocation(tmp_path, name))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_a_dash_image_step_does_not_pass_having_run_nothing(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    recipe = Recipe(name="r")
    recipe.add_step("tool", Cab(name="tool", command=["sh", "-c", "echo hi > x"], image="--help"))
    with pytest.raises(ContainerRefused, match="starts with '-'"):
        run_recipe(recipe, backend=engine, config=config_for(engine), cwd=tmp_path)


def test_apptainer_runs_a_sif_file_whose_name_starts_with_a_dash(tmp_path: Path) -> None:
    live_backend("apptainer")
    shutil.copy(image("apptainer"), tmp_path / "-b.sif")
    recipe = Recipe(name="r")
    recipe.add_step("tool", Cab(name="tool", command=["sh", "-c", "echo hi > x"], image="-b.sif"))
    result = run_recipe(
        recipe, backend="apptainer", config=config_for("apptainer"), cwd=tmp_path, use_cache=False
    )
    assert result.steps[0].status == "ok", result.steps[0].error
    assert (tmp_path / "x").read_text() == "hi\n"
