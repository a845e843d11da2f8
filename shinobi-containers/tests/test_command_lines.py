"""The engine command lines each backend renders (no engine is called)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from stand_in import QUIET_ENGINE

from shinobi.backends.base import Invocation, PathUse
from shinobi.errors import ENVIRONMENT_EXIT
from shinobi.resources import Resources
from shinobi_containers.apptainer import ApptainerBackend, SingularityBackend
from shinobi_containers.cgroups import CgroupReach
from shinobi_containers.docker import DockerBackend
from shinobi_containers.engine import ContainerBackend, new_container_name
from shinobi_containers.errors import (
    ContainerRefused,
    EngineMissing,
    EngineUnreachable,
    MountRefused,
)
from shinobi_containers.mounts import Mount, mount_option
from shinobi_containers.podman import PodmanBackend

NASTY = 'it\'s a "test" $(touch /tmp/pwned) `x` ; & | *'


def invocation(tmp_path: Path, **extra: Any) -> Invocation:
    fields: dict[str, Any] = {
        "step": "make image",
        "argv": ("wsclean", "-name", NASTY),
        "cwd": str(tmp_path),
        "image": "quay.io/stimela/wsclean:1.7",
        "run_id": "run-1",
    }
    fields.update(extra)
    return Invocation(**fields)


def option_values(argv: list[str], option: str) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == option]


def test_container_names_are_shinobi_and_random() -> None:
    names = {new_container_name() for _ in range(50)}
    assert len(names) == 50
    assert all(re.fullmatch(r"shinobi-[0-9a-f]{12}", n) for n in names)


def test_docker_renders_a_complete_run(tmp_path: Path) -> None:
    backend = DockerBackend({"network": "none", "run_flags": "--shm-size 1g"})
    argv = backend.render(invocation(tmp_path, env={"OMP_NUM_THREADS": "2"}))
    assert argv[:3] == ["docker", "run", "--name"] and argv[3].startswith("shinobi-")
    assert "--init" in argv and option_values(argv, "--network") == ["none"]
    assert option_values(argv, "--user") == [f"{os.getuid()}:{os.getgid()}"]
    assert option_values(argv, "--workdir") == [str(tmp_path)]
    assert option_values(argv, "--mount") == [f"type=bind,source={tmp_path},target={tmp_path}"]
    assert option_values(argv, "--env") == ["OMP_NUM_THREADS=2"]
    assert option_values(argv, "--label") == ["shinobi.run=run-1", "shinobi.step=make image"]
    tail = argv[argv.index("--shm-size") :]
    assert tail == ["--shm-size", "1g", "quay.io/stimela/wsclean:1.7", "wsclean", "-name", NASTY]


def test_a_container_is_removed_after_its_memory_kill_is_read_not_by_rm(tmp_path: Path) -> None:
    """ninja, and a compiled job alike, ask the engine whether it killed the step for
    memory once it ended, so they remove the container themselves: with ``--rm`` the
    record went with it, and a worker killed so left the job "completed"."""
    backend = DockerBackend({})
    spec = backend.spec(invocation(tmp_path), pin=False)
    assert "--rm" not in backend.command(spec, "shinobi-x")
    job = backend.render_for_job(invocation(tmp_path))
    name = job.argv[job.argv.index("--name") + 1]
    assert "--rm" not in job.argv
    assert job.oom_probe == ["docker", "inspect", "--format", "{{.State.OOMKilled}}", name]
    assert job.stop == ["docker", "rm", "-f", name]


def test_run_as_host_user_can_be_turned_off(tmp_path: Path) -> None:
    argv = DockerBackend({"run_as_host_user": False}).render(invocation(tmp_path))
    assert "--user" not in argv


def test_declared_limits_are_rendered(tmp_path: Path) -> None:
    backend = DockerBackend({"enforce_resources": "always"})
    argv = backend.render(invocation(tmp_path, resources=Resources(cpus=1.5, memory="2GiB")))
    assert option_values(argv, "--cpus") == ["1.5"]
    assert option_values(argv, "--memory") == [str(2 * 1024**3)]


def test_podman_renders_the_same_run(tmp_path: Path) -> None:
    argv = PodmanBackend({}).render(invocation(tmp_path))
    # no --rm: a compiled job asks the engine whether it killed the step for memory
    # (Rendered.oom_probe), then removes the container with its stop command
    assert argv[:3] == ["podman", "run", "--name"] and "--init" in argv
    assert argv[-4:] == ["quay.io/stimela/wsclean:1.7", "wsclean", "-name", NASTY]


def test_rootless_podman_keeps_the_users_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1500)
    argv = PodmanBackend({}).render(invocation(tmp_path))
    assert option_values(argv, "--userns") == ["keep-id"] and "--user" not in argv


def test_apptainer_renders_an_exec_that_shares_only_what_is_declared(tmp_path: Path) -> None:
    image = tmp_path / "wsclean.sif"
    image.write_bytes(b"sif")
    argv = ApptainerBackend({}).render(invocation(tmp_path, image="wsclean.sif"))
    assert argv[:4] == ["apptainer", "exec", "--contain", "--cleanenv"]
    assert option_values(argv, "--pwd") == [str(tmp_path)]
    assert option_values(argv, "--mount") == [f"type=bind,source={tmp_path},target={tmp_path}"]
    assert argv[-4:] == [str(image), "wsclean", "-name", NASTY]
    assert "--user" not in argv


def test_apptainer_takes_uris_as_they_are_and_names_from_a_registry(tmp_path: Path) -> None:
    backend = ApptainerBackend({})
    assert backend.render(invocation(tmp_path, image="oras://x/y:1"))[-4] == "oras://x/y:1"
    assert backend.render(invocation(tmp_path))[-4] == "docker://quay.io/stimela/wsclean:1.7"


@pytest.mark.parametrize("image", ["/data/imgs/wsclen.sif", "imgs/wsclen.sif", "./wsclen"])
def test_apptainer_says_a_missing_image_file_is_missing(tmp_path: Path, image: str) -> None:
    from shinobi_containers.errors import ImageUnavailable

    with pytest.raises(
        ImageUnavailable, match=r"^step '.*': the image file .*wsclen.* does not exist"
    ):
        ApptainerBackend({}).render(invocation(tmp_path, image=image))


def test_apptainer_says_a_plain_directory_is_no_image(tmp_path: Path) -> None:
    """apptainer itself said only "destination /dev doesn't exist in container"."""
    from shinobi_containers.errors import ImageUnavailable

    (tmp_path / "sp ace").mkdir()
    with pytest.raises(ImageUnavailable, match=r"is a directory but no container's root"):
        ApptainerBackend({}).render(invocation(tmp_path, image="sp ace"))
    (tmp_path / "sandbox" / ".singularity.d").mkdir(parents=True)  # apptainer build --sandbox
    assert str(tmp_path / "sandbox") in ApptainerBackend({}).render(
        invocation(tmp_path, image="sandbox")
    )


def _singularity(tmp_path: Path, says: str) -> SingularityBackend:
    """A singularity whose ``--version`` answers ``says`` (SingularityCE, or apptainer)."""
    fake = tmp_path / "bin" / "singularity"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f"#!/bin/sh\necho '{says}'\n")
    fake.chmod(0o755)
    return SingularityBackend({"binary": str(fake)})


@pytest.mark.parametrize(
    ("engine", "prefix"),
    [
        ("apptainer", "APPTAINERENV_"),
        ("singularity-ce version 4.1.0", "SINGULARITYENV_"),
        ("apptainer version 1.4.5", "APPTAINERENV_"),  # apptainer under its old name
    ],
)
def test_apptainer_passes_the_steps_variables_through_its_environment(
    tmp_path: Path, engine: str, prefix: str
) -> None:
    backend = ApptainerBackend({}) if engine == "apptainer" else _singularity(tmp_path, engine)
    env = backend.client_environment(invocation(tmp_path, env={"A": "1,2 $(x)"}))
    # escaped for the script apptainer evaluates: the container sees "1,2 $(x)"
    # (test_paths_live checks that on the real engines)
    assert env is not None and env[f"{prefix}A"] == "1,2 \\$(x)"
    assert backend.client_environment(invocation(tmp_path)) is None
    # a compiled job has no client environment: the rendered command sets it
    rendered = backend.render(invocation(tmp_path, env={"A": "1,2 $(x)"}))
    assert rendered[:2] == ["env", f"{prefix}A=1,2 \\$(x)"]
    assert backend.render(invocation(tmp_path))[0] != "env"


def test_singularity_is_apptainer_under_its_former_binary(tmp_path: Path) -> None:
    argv = SingularityBackend({}).render(invocation(tmp_path))
    assert argv[:2] == ["singularity", "exec"]


def test_the_binary_can_be_configured(tmp_path: Path) -> None:
    assert DockerBackend({"binary": "/opt/docker"}).render(invocation(tmp_path))[0] == "/opt/docker"


@pytest.mark.parametrize("backend", [DockerBackend({}), ApptainerBackend({})])
def test_a_step_without_an_image_is_refused(tmp_path: Path, backend: ContainerBackend) -> None:
    with pytest.raises(ContainerRefused) as info:
        backend.render(invocation(tmp_path, image=None))
    message = str(info.value)
    assert "'make image'" in message and "names no image" in message and "\n" not in message


def test_prepare_refuses_impossible_mounts_before_anything_runs(tmp_path: Path) -> None:
    output = PathUse("/no-such-top-level/out.txt", "output", "out", "file")
    with pytest.raises(MountRefused, match="create /no-such-top-level"):
        DockerBackend({"binary": QUIET_ENGINE}).prepare([invocation(tmp_path, paths=(output,))])


def test_prepare_refuses_an_engine_binary_that_is_not_there(tmp_path: Path) -> None:
    backend = DockerBackend({"binary": "/nonexistent/docker"})
    with pytest.raises(ContainerRefused, match=r"^/nonexistent/docker does not exist: point"):
        backend.prepare([invocation(tmp_path)])
    assert backend.prepare([]) == []  # no step of its own: nothing to refuse
    named = DockerBackend({"binary": "no-such-docker"})
    with pytest.raises(
        ContainerRefused, match=r"^no-such-docker not found on PATH: install"
    ) as got:
        named.prepare([invocation(tmp_path)])
    assert got.value.exit_code == 2  # a setting names it: the setting is to mend
    (tmp_path / "docker").write_text("")  # there, but no program
    there = DockerBackend({"binary": str(tmp_path / "docker")})
    with pytest.raises(ContainerRefused, match=r"docker is not executable: point"):
        there.prepare([invocation(tmp_path)])


def test_an_engine_left_to_path_and_not_installed_is_the_machine_s_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """74, as sbatch missing is for Slurm: the same recipe runs where docker is."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no docker here
    with pytest.raises(EngineMissing, match=r"^docker not found on PATH: install docker") as got:
        DockerBackend({}).prepare([invocation(tmp_path)])
    assert got.value.exit_code == ENVIRONMENT_EXIT


def test_prepare_warns_once_per_dropped_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = PodmanBackend({"binary": QUIET_ENGINE})  # the check needs no podman here
    reach = CgroupReach({"cpu": "the cpu cgroup controller is not delegated to this user"})
    monkeypatch.setattr(backend, "cgroup_reach", lambda: reach)
    declared = invocation(tmp_path, resources=Resources(cpus=2, memory="1GiB"))
    warnings = backend.prepare([declared, declared])
    assert len(warnings) == 1 and "--cpus" in warnings[0] and "not delegated" in warnings[0]
    assert backend.prepare([declared]) == []
    assert option_values(backend.render(declared), "--memory") == [str(1024**3)]
    assert "--cpus" not in backend.render(declared)


def test_a_mount_option_quotes_what_would_split_it() -> None:
    plain = mount_option(Mount("/a b", "/a b"))
    assert plain == "type=bind,source=/a b,target=/a b"
    odd = mount_option(Mount('/x,y "z":w', '/x,y "z":w', readonly=True))
    assert odd == 'type=bind,"source=/x,y ""z"":w","target=/x,y ""z"":w",readonly'


@pytest.mark.parametrize("backend", [ApptainerBackend, SingularityBackend])
def test_a_network_setting_apptainer_cannot_honour_is_said(
    tmp_path: Path, backend: type[ApptainerBackend]
) -> None:
    """docker/podman's ``network`` was taken by apptainer and silently did nothing."""
    engine = backend({"network": "none", "binary": QUIET_ENGINE})
    warnings = engine.prepare([invocation(tmp_path, image="docker://busybox")])
    assert any("network = 'none' does nothing here" in w for w in warnings), warnings
    quiet = backend({"binary": QUIET_ENGINE}).prepare([invocation(tmp_path, image="docker://bb")])
    assert not any("network" in w for w in quiet)


@pytest.mark.parametrize(
    ("image", "said"),
    [
        ("Shinobi-Test/busybox", "repository name must be lowercase"),
        ("registry.example.org/Astro/wsclean:1.7", "repository name must be lowercase"),
        ("../bb.sif", "names a file (a SIF image?)"),
        ("/data/images/wsclean.sif", "names a file (a SIF image?)"),
        # the fix for `ninja compile` too, where --backend is no option
        ("bb.sif", "`ninja compile --container-runtime apptainer`"),
    ],
)
def test_an_image_docker_could_only_fail_on_is_refused_before_the_run(
    tmp_path: Path, image: str, said: str
) -> None:
    with pytest.raises(ContainerRefused, match=re.escape(said)):
        DockerBackend({}).render(invocation(tmp_path, image=image))


@pytest.mark.parametrize(
    "image", ["quay.io/stimela/wsclean:1.7-RC1", "localhost:5000/astro/ddf", "busybox@sha256:ab"]
)
def test_valid_references_pass(tmp_path: Path, image: str) -> None:
    assert image in PodmanBackend({}).render(invocation(tmp_path, image=image))


def test_prepare_ends_the_run_when_the_docker_daemon_does_not_answer(tmp_path: Path) -> None:
    """It failed the first docker step mid-pipeline, exit 1 (or waited for ever on a hung one)."""
    client = tmp_path / "docker"
    client.write_text(
        '#!/bin/sh\n[ "$1" = --version ] && echo "Docker version 20.10.24" && exit 0\n'
        "echo 'Cannot connect to the Docker daemon at unix:///x' >&2\nexit 1\n"
    )
    client.chmod(0o755)
    backend = DockerBackend({"binary": str(client)})
    with pytest.raises(EngineUnreachable) as caught:
        backend.prepare([invocation(tmp_path)])
    assert caught.value.exit_code == 74
    assert "the docker daemon is not reachable (Cannot connect" in str(caught.value)


def test_steps_without_an_image_are_named_once_each_slices_and_nested_ones_too() -> None:
    """A step of a scattered recipe's slice (``per[0].s[3]``) was named ``per``."""
    from shinobi_containers.engine import _declared_steps

    names = ["per[0].s[3]", "per[1].s[0]", "solve[2]", "solve[5]"]
    assert _declared_steps(names) == ["per.s", "solve"]
