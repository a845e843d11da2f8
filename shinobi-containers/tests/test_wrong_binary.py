"""A ``binary`` that is some other program is named as such by ``ninja run``.

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


def _run(engine: str, tmp_path: Path) -> object:
    return run_recipe(
        _cab(engine),
        {"dst": "z/x.txt"},
        backend=engine,
        config=config_for(engine, binary="/bin/false"),
        cwd=tmp_path,
        use_cache=False,
    )


def test_docker_names_the_wrong_binary_not_its_daemon(tmp_path: Path) -> None:
    """Docker asks its daemon before any step: that failing, the binary is looked at."""
    said = get_backend("docker", {"binary": "/bin/false"}).check().detail
    assert said.startswith(_diagnosis("docker"))
    with pytest.raises(SettingsInvalid) as refused:
        _run("docker", tmp_path)
    assert str(refused.value) == said
    assert "not reachable" not in str(refused.value)
    assert not (tmp_path / "z").exists()


@pytest.mark.parametrize("engine", ("podman", "apptainer"))
@pytest.mark.parametrize("wrong", ("/bin/false", "/bin/true"))
def test_an_engine_without_a_daemon_is_refused_before_any_step(
    engine: str, wrong: str, tmp_path: Path
) -> None:
    """Podman and apptainer have no daemon to ask first: their first step failed on
    /bin/false, and with /bin/true every step "succeeded" having run nothing. A
    configured binary is asked its version before any step."""
    said = get_backend(engine, {"binary": wrong}).check().detail
    assert said.startswith(f"{wrong} is not {engine}: ")
    with pytest.raises(SettingsInvalid) as refused:
        run_recipe(
            _cab(engine),
            {"dst": "z/x.txt"},
            backend=engine,
            config=config_for(engine, binary=wrong),
            cwd=tmp_path,
            use_cache=False,
        )
    assert str(refused.value) == said


@pytest.mark.parametrize("engine", (*OCI_ENGINES, "apptainer"))
@pytest.mark.parametrize("wrong", ("/bin/false", "/bin/true"))
def test_a_step_prepare_never_saw_names_the_wrong_binary(
    engine: str, wrong: str, tmp_path: Path
) -> None:
    backend = get_backend(engine, {"binary": wrong})
    invocation = Invocation(step="s", argv=("true",), cwd=str(tmp_path), image=image(engine))
    run = backend.run(invocation, RunControl())
    assert run.returncode != 0
    assert (run.reason or "").startswith(f"{wrong} is not {engine}"), run.reason


def test_a_working_engine_is_not_asked_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that works pays no extra call to tell the binary is the engine."""
    backend = get_backend("docker")
    asked: list[str] = []
    monkeypatch.setattr(type(backend), "version_lines", lambda self: asked.append("v") or [])
    invocation = Invocation(step="s", argv=("true",), cwd=str(tmp_path), image=image("docker"))
    assert backend.run(invocation, RunControl()).returncode == 0
    assert asked == []
