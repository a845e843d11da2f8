"""A ``binary`` that is some other program is named as such by ``ninja run`` (audit 25, C3.2).

``ninja backends`` said "/bin/false is not docker", while a run said the
(running) docker daemon was not reachable and told the admin to start it;
podman's steps failed one by one on whatever ``/bin/false run ...`` gave.
A run now refuses with the diagnosis ``ninja backends`` gives, before any
step, and so does a step prepare() was not shown (a pystep's, a ctx.run()'s).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import OCI_ENGINES, image
from pydantic import BaseModel

from recipes import config_for
from shinobi.backends import get_backend
from shinobi.backends.base import Invocation, RunControl
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta
from shinobi_containers.errors import SettingsInvalid


class MkIn(BaseModel):
    dst: File


class Mk(BaseModel):
    dst: File


def _cab(engine: str) -> Cab:
    return Cab(
        name="mk",
        command=["sh", "-c", 'mkdir -p "$(dirname "$1")" && echo hi > "$1"', "sh"],
        inputs_model=MkIn,
        outputs_model=Mk,
        field_meta={"dst": ParamMeta(positional=True)},
        image=image(engine),
    )


def _diagnosis(engine: str) -> str:
    return f"/bin/false is not {engine}: `/bin/false --version` says"


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_a_run_names_the_wrong_binary_as_ninja_backends_does(engine: str, tmp_path: Path) -> None:
    backend = get_backend(engine, {"binary": "/bin/false"})
    said = backend.check().detail
    assert said.startswith(_diagnosis(engine))
    with pytest.raises(SettingsInvalid) as refused:
        run_recipe(
            _cab(engine),
            {"dst": "z/x.txt"},
            backend=engine,
            config=config_for(engine, binary="/bin/false"),
            cwd=tmp_path,
            use_cache=False,
        )
    assert str(refused.value) == said
    assert "not reachable" not in str(refused.value)
    assert not (tmp_path / "z").exists()


@pytest.mark.parametrize("engine", (*OCI_ENGINES, "apptainer"))
def test_a_step_prepare_never_saw_is_refused_the_same(engine: str, tmp_path: Path) -> None:
    backend = get_backend(engine, {"binary": "/bin/false"})
    invocation = Invocation(step="s", argv=("true",), cwd=str(tmp_path), image=image(engine))
    with pytest.raises(SettingsInvalid, match=r"^/bin/false is not"):
        backend.run(invocation, RunControl())
