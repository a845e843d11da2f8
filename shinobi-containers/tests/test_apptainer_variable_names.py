"""A cab variable apptainer cannot hand in is refused before anything runs.

apptainer hands ``APPTAINERENV_*`` variables in through a shell script in the
container, which stopped at ``OMP-THREADS`` ("invalid var name"): every variable
of the cab was lost and the step ran without them, exit 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import image
from stand_in import QUIET_ENGINE

from shinobi.backends.base import Invocation
from shinobi_containers.apptainer import ApptainerBackend
from shinobi_containers.errors import ContainerRefused


def _step(tmp_path: Path, env: dict[str, str]) -> Invocation:
    return Invocation(
        step="tool", argv=("true",), cwd=str(tmp_path), image=image("apptainer"), env=env
    )


@pytest.mark.parametrize("name", ["OMP-THREADS", "1X", "A.B"])
def test_a_name_no_shell_takes_is_refused_before_the_run(tmp_path: Path, name: str) -> None:
    backend = ApptainerBackend({"binary": QUIET_ENGINE})
    with pytest.raises(ContainerRefused, match=f"the variable '{name}' cannot reach an apptainer"):
        backend.prepare([_step(tmp_path, {"MY_VAR": "needed", name: "4"})])


def test_names_a_shell_takes_pass(tmp_path: Path) -> None:
    backend = ApptainerBackend({"binary": QUIET_ENGINE})
    backend.prepare([_step(tmp_path, {"MY_VAR": "needed", "_x1": "4"})])


def test_a_home_with_a_colon_is_refused_before_the_run(tmp_path: Path) -> None:
    """``--home a:b`` is SOURCE:DESTINATION to apptainer: the step failed when it
    started, "path x is not an absolute path"."""
    backend = ApptainerBackend({"binary": QUIET_ENGINE})
    with pytest.raises(ContainerRefused, match="HOME '/w/h:x' holds a ':'"):
        backend.prepare([_step(tmp_path, {"HOME": "/w/h:x"})])
    backend.prepare([_step(tmp_path, {"HOME": "/w/h,x"})])


def test_an_image_that_cannot_be_pinned_is_refused_before_the_run(tmp_path: Path) -> None:
    """With provenance on, a URI image apptainer cannot pin failed its step only when
    the step's turn came, after every step before it had run."""
    from shinobi_containers.errors import ImageUnavailable

    backend = ApptainerBackend({"binary": QUIET_ENGINE, "pin_image": True})
    uri = Invocation(step="late", argv=("true",), cwd=str(tmp_path), image="docker://busybox:1")
    with pytest.raises(ImageUnavailable, match="can pin only a local image file"):
        backend.prepare([_step(tmp_path, {}), uri])
    ApptainerBackend({"binary": QUIET_ENGINE}).prepare([_step(tmp_path, {}), uri])  # unpinned
