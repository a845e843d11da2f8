"""Every step without an image is named in the one refusal before a container run:
the first alone was named, so moving a pipeline into containers took one run per
step (fix a cab, run, be refused for the next). Slices and loop cycles of one
declared step are named once, and a long list ends with "and N more"."""

from __future__ import annotations

from pathlib import Path

import pytest
from stand_in import QUIET_ENGINE

from shinobi.backends.base import Invocation
from shinobi_containers.docker import DockerBackend
from shinobi_containers.errors import ContainerRefused


def _bare(tmp_path: Path, *steps: str) -> list[Invocation]:
    return [Invocation(step=s, argv=("tool",), cwd=str(tmp_path), image=None) for s in steps]


def _refusal(tmp_path: Path, *steps: str) -> str:
    dressed = Invocation(step="fine", argv=("tool",), cwd=str(tmp_path), image="img:1")
    with pytest.raises(ContainerRefused) as info:
        DockerBackend({"binary": QUIET_ENGINE}).prepare([dressed, *_bare(tmp_path, *steps)])
    return str(info.value)


def test_every_step_without_an_image_is_named_once(tmp_path: Path) -> None:
    steps = ("observe", "solve[0]", "solve[1]", "loop.1.cal", "loop.2.cal", "loop.1.img")
    assert _refusal(tmp_path, *steps) == (
        "4 steps name no image ('observe', 'solve', 'loop.*.cal', 'loop.1.img'), so the"
        " docker backend cannot run them: give their cabs an image, or choose a backend"
        " such as native for them"
    )


def test_one_step_is_refused_as_before(tmp_path: Path) -> None:
    assert _refusal(tmp_path, "image[0]", "image[1]") == (
        "step 'image' names no image, so the docker backend cannot run it: give its cab an"
        " image, or choose a backend such as native for it"
    )


def test_a_long_list_names_ten(tmp_path: Path) -> None:
    message = _refusal(tmp_path, *(f"s{k}" for k in range(13)))
    assert message.startswith("13 steps name no image ('s0', 's1',")
    assert "'s9' and 3 more), so" in message and "'s10'" not in message
