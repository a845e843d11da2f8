"""What a step is given and what it leaves behind, live: found by an audit.

* ``HOME`` in a cab's ``env`` was silently dropped by apptainer (it refuses
  ``APPTAINERENV_HOME`` with only a warning), so a tool that keeps its state
  in ``~`` (CASA's ``~/.casa``) wrote it to the container's default home and
  lost it, while docker and podman honoured the same cab.
* An apptainer payload is not torn down with a container when its command
  exits: a background writer it started went on writing the step's output
  after ninja reported the step done (and after ninja itself exited), so the
  next step read a truncated product. Natively the same step fails saying so.
* apptainer's URIs written without ``//`` (``docker-daemon:``,
  ``docker-archive:``, ``oci:``, ``oci-archive:``) were taken for a registry's
  name and run as ``docker://docker-daemon:...``, which apptainer refuses.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend

from shinobi.backends.base import Invocation, PathUse, RunControl
from shinobi_containers.apptainer import ApptainerBackend, SingularityBackend

#: apptainer under both names: the backends whose payload outlives nothing of its own.
APPTAINERS = ("apptainer", "singularity")


def _invocation(engine: str, area: Path, script: str, **extra: object) -> Invocation:
    return Invocation(
        step="audit",
        argv=("/bin/sh", "-c", script),
        cwd=str(area),
        image=image(engine),
        run_id="ctraudit-live",
        stdout_path=str(area / "audit.out"),
        stderr_path=str(area / "audit.err"),
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_a_home_the_cab_declares_is_the_steps_home(engine: str, tmp_path: Path) -> None:
    backend = live_backend(engine)
    tmp_path.chmod(0o777)
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o777)
    said = tmp_path / "home.txt"
    script = f"printf '%s' \"$HOME\" > '{said}' && touch \"$HOME/.toolrc\""
    invocation = _invocation(
        engine,
        tmp_path,
        script,
        env={"HOME": str(home), "V": "kept"},
        paths=(PathUse(str(said), "output", "said", "file"),),
    )
    result = backend.run(invocation, RunControl(grace=2.0))
    assert result.returncode == 0, result.stderr
    assert said.read_text() == str(home)
    assert (home / ".toolrc").exists(), "what the tool kept in its home is not on the host"


@pytest.mark.parametrize("engine", APPTAINERS)
def test_a_writer_left_running_fails_the_step_instead_of_truncating_its_output(
    engine: str, tmp_path: Path
) -> None:
    backend = live_backend(engine)
    product = tmp_path / "product.txt"
    script = f"(for i in 1 2 3 4 5 6; do echo $i; sleep 1; done > '{product}') & echo started"
    invocation = _invocation(
        engine, tmp_path, script, paths=(PathUse(str(product), "output", "product", "file"),)
    )
    result = backend.run(invocation, RunControl(grace=2.0))
    assert result.returncode != 0, "a step whose output was still being written was done"
    assert result.reason is not None and "still writing its output" in result.reason


@pytest.mark.parametrize(
    "uri",
    [
        "docker-daemon:quay.io/stimela/wsclean:1.7",
        "docker-archive:/data/images/wsclean.tar",
        "oci:/data/images/wsclean-layout:1.7",
        "oci-archive:images/wsclean.tar",
    ],
)
@pytest.mark.parametrize("backend", [ApptainerBackend({}), SingularityBackend({})])
def test_apptainer_uris_without_slashes_are_passed_as_they_are(
    backend: ApptainerBackend, uri: str, tmp_path: Path
) -> None:
    step = Invocation(step="image", argv=("wsclean",), cwd=str(tmp_path), image=uri)
    assert backend.render(step)[-2] == uri


def test_an_image_of_the_local_docker_daemon_runs_on_apptainer(tmp_path: Path) -> None:
    backend = live_backend("apptainer")
    live_backend("docker")
    product = tmp_path / "product.txt"
    script = f"echo made > '{product}'"
    invocation = _invocation(
        "apptainer", tmp_path, script, paths=(PathUse(str(product), "output", "product", "file"),)
    )
    daemon = f"docker-daemon:{image('docker')}"
    result = backend.run(replace(invocation, image=daemon), RunControl(grace=2.0))
    assert result.returncode == 0, result.stderr
    assert product.read_text() == "made\n"


@pytest.mark.parametrize("backend", [ApptainerBackend({}), SingularityBackend({})])
def test_apptainer_gives_a_declared_home_as_home_not_as_a_variable_it_ignores(
    backend: ApptainerBackend, tmp_path: Path
) -> None:
    env = {"HOME": "/data/casa home", "V": "kept"}
    step = Invocation(step="image", argv=("casa",), cwd=str(tmp_path), image="x.sif", env=env)
    (tmp_path / "x.sif").write_bytes(b"")
    argv = backend.render(step)
    assert argv[argv.index("--home") + 1] == "/data/casa home"
    assert not [word for word in argv if word.endswith("ENV_HOME=/data/casa home")]
    assert f"{backend.variable_prefix()}V=kept" in argv


def test_singularity_that_is_apptainer_gets_variables_as_apptainer_wants_them(
    tmp_path: Path,
) -> None:
    """SINGULARITYENV_ worked, but every step's log said APPTAINERENV_ was preferred."""
    backend = live_backend("singularity")
    said = tmp_path / "v.txt"
    invocation = _invocation(
        "singularity",
        tmp_path,
        f"printf '%s' \"$V\" > '{said}'",
        env={"V": "kept $(not run)"},
        paths=(PathUse(str(said), "output", "said", "file"),),
    )
    result = backend.run(invocation, RunControl(grace=2.0))
    assert result.returncode == 0, result.stderr
    assert said.read_text() == "kept $(not run)"
    assert "is preferred" not in result.stderr
