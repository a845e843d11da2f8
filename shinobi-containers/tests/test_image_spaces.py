"""An image name with a stray space.

``image='localhost/shinobi-test/busybox:latest '`` (easy to get from a config
value or an f-string) started the step, and podman failed it with its bare
"invalid reference format". No reference can hold whitespace, so the name is
now refused before the run, naming the image and where the space is. An
image file's path may hold spaces: apptainer takes one that exists, and a
missing one's message shows the stray space the path hid.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from live_engines import image, live_backend
from stand_in import QUIET_ENGINE

from shinobi.backends.base import Invocation
from shinobi_containers.apptainer import ApptainerBackend
from shinobi_containers.docker import DockerBackend
from shinobi_containers.errors import ContainerRefused
from shinobi_containers.podman import PodmanBackend


def step(tmp_path: Path, name: str) -> Invocation:
    return Invocation(step="only", argv=("true",), cwd=str(tmp_path), image=name)


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("localhost/shinobi-test/busybox:latest ", "a space at its end"),
        (" busybox", "a space at its start"),
        ("busy box:1", "a space inside it"),
        ("busybox\t", "whitespace ('\\t') at its end"),
    ],
)
@pytest.mark.parametrize("backend", [DockerBackend, PodmanBackend])
def test_docker_and_podman_refuse_it_before_the_run(
    tmp_path: Path, name: str, where: str, backend: type[DockerBackend]
) -> None:
    engine = backend({"binary": QUIET_ENGINE})
    with pytest.raises(ContainerRefused) as refused:
        engine.prepare([step(tmp_path, name)])
    said = str(refused.value)
    assert said == (
        f"step 'only': image {name!r} is not a valid reference: it has {where},"
        " and a reference has none; remove it"
    )


@pytest.mark.parametrize("name", ["docker://busybox ", "busybox:latest ", "oras://a b/c"])
def test_apptainer_refuses_it_in_a_reference(tmp_path: Path, name: str) -> None:
    with pytest.raises(ContainerRefused, match="is not a valid reference: it has a space"):
        ApptainerBackend({"binary": QUIET_ENGINE}).prepare([step(tmp_path, name)])


def test_apptainer_shows_the_space_of_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ContainerRefused) as refused:
        ApptainerBackend({"binary": QUIET_ENGINE}).prepare([step(tmp_path, "tool.sif ")])
    assert "does not exist; check the path: 'tool.sif ' has a space at its end" in str(
        refused.value
    )


def test_apptainer_runs_an_image_file_whose_name_has_spaces(tmp_path: Path) -> None:
    """A path may hold spaces: only what could only fail is refused."""
    backend = live_backend("apptainer")
    named = tmp_path / "my images" / "busy box .sif"
    named.parent.mkdir()
    shutil.copy(image("apptainer"), named)
    assert backend.image_reference(step(tmp_path, "my images/busy box .sif")) == str(named)


@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_live_refusal_comes_before_any_container(engine: str, tmp_path: Path) -> None:
    backend = live_backend(engine)
    with pytest.raises(ContainerRefused, match="a space at its end"):
        backend.prepare([step(tmp_path, f"{image(engine)} ")])
