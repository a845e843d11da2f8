"""Declared resources to runtime flags, under each enforce_resources mode."""

from __future__ import annotations

import json
from typing import Any

import pytest
from stand_in import QUIET_ENGINE

from shinobi.resources import Resources
from shinobi_containers.cgroups import UNPROBED, CgroupReach
from shinobi_containers.limits import dropped_warning, limit_flags

NO_CPU = CgroupReach({"cpu": "the cpu cgroup controller is not delegated to this user"})


def test_declared_cpus_and_memory_become_flags() -> None:
    limits = limit_flags(Resources(cpus=2, memory="64MiB"), "auto", CgroupReach())
    assert limits.flags == ("--cpus", "2", "--memory", str(64 * 1024 * 1024))
    assert limits.memory == 64 * 1024 * 1024 and limits.cpus == 2.0
    assert limits.dropped == {}


def test_fractional_cpus_keep_their_fraction() -> None:
    assert limit_flags(Resources(cpus=0.25), "always").flags == ("--cpus", "0.25")


def test_all_cpus_is_no_limit() -> None:
    limits = limit_flags(Resources(cpus="all", memory="1GB"), "always")
    assert limits.flags == ("--memory", "1000000000")


def test_nothing_declared_gives_nothing() -> None:
    assert limit_flags(None, "always").flags == ()
    assert limit_flags(Resources(), "always").flags == ()
    assert not limit_flags(Resources(), "auto").emitted


def test_never_passes_no_limits_and_warns_of_nothing() -> None:
    limits = limit_flags(Resources(cpus=1, memory="1GiB"), "never", NO_CPU)
    assert limits.flags == () and limits.dropped == {} and limits.memory is None


def test_auto_drops_only_what_this_host_cannot_apply() -> None:
    limits = limit_flags(Resources(cpus=4, memory="1GiB"), "auto", NO_CPU)
    assert limits.flags == ("--memory", str(1024**3))
    assert limits.dropped == {"--cpus": NO_CPU.missing["cpu"]}
    assert limits.cpus is None and limits.memory == 1024**3


def test_a_memory_limit_auto_dropped_is_not_one_the_step_ran_under() -> None:
    """An exit 137 under a declared memory limit is read as the kernel's OOM kill: a
    limit this host could not apply was never set, and a SIGKILL from elsewhere
    would have been reported as the step outgrowing it."""
    no_memory = CgroupReach({"memory": "the memory cgroup controller is not delegated"})
    limits = limit_flags(Resources(cpus=2, memory="1GiB"), "auto", no_memory)
    assert limits.flags == ("--cpus", "2")
    assert limits.memory is None and limits.cpus == 2.0


def test_always_emits_everything_whatever_the_probe_says() -> None:
    limits = limit_flags(Resources(cpus=4, memory="1GiB"), "always", NO_CPU)
    assert limits.flags == ("--cpus", "4", "--memory", str(1024**3))


def test_auto_without_a_probe_emits_everything() -> None:
    limits = limit_flags(Resources(cpus=4), "auto", UNPROBED)
    assert limits.flags == ("--cpus", "4")


@pytest.mark.parametrize("flag", ["--cpus", "--memory"])
def test_the_warning_names_the_flag_the_reason_and_the_settings(flag: str) -> None:
    message = dropped_warning("apptainer", flag, "no delegation")
    assert flag in message and "no delegation" in message and "apptainer" in message
    assert "enforce_resources" in message and "\n" not in message


@pytest.mark.parametrize(("engine", "refused"), [("podman", True), ("docker", False)])
def test_always_refuses_before_the_run_what_an_engine_would_silently_ignore(
    monkeypatch: pytest.MonkeyPatch, engine: str, refused: bool
) -> None:
    """Rootless podman on cgroup v1 took --memory, ignored it, and the step passed.

    The engine's own probe is replaced here (this is about what ninja does with its
    answer); docker, which refuses such a limit itself, is left to do so.
    """
    from shinobi.backends import get_backend
    from shinobi.backends.base import Invocation
    from shinobi_containers.errors import ContainerRefused

    backend = get_backend(engine, {"enforce_resources": "always"})
    reach = CgroupReach({"memory": "the memory cgroup controller is not delegated"})
    monkeypatch.setattr(backend, "cgroup_reach", lambda: reach)
    invocation = Invocation(
        step="hog", argv=("true",), cwd="/tmp", image="img", resources=Resources(memory="64MiB")
    )
    if not refused:
        assert "--memory" in backend.spec(invocation, pin=False).limits.flags
        return
    with pytest.raises(ContainerRefused) as caught:
        backend.spec(invocation, pin=False)
    said = str(caught.value)
    assert "podman cannot enforce --memory on this host (the memory cgroup controller" in said
    assert 'enforce_resources is "always"' in said and 'set it to "auto"' in said


LIMITED = """
from shinobi.resources import Resources
from shinobi.steps import Cab, Recipe

work = Cab("work", ["nproc"], image="busybox", resources=Resources(cpus=1.5, memory="100MiB"))
pipe = Recipe("pipe")
pipe.add_step("a", work)
pipe.add_step("b", work)
"""


@pytest.mark.parametrize("as_json", [False, True])
def test_a_dry_run_warns_of_a_limit_the_run_would_drop(
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    as_json: bool,
) -> None:
    """The run warned once; the dry run showed the command without --cpus and said nothing."""
    from shinobi.cli.main import main
    from shinobi_containers.podman import PodmanBackend

    monkeypatch.setattr(PodmanBackend, "cgroup_reach", lambda self: NO_CPU)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text(LIMITED)
    code = 0
    try:
        main(["run", "r.py:pipe", "--backend", "podman", "--dryrun", *(["--json"] * as_json)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code == 0, err
    # the command shown (the JSON document's warnings say why --cpus is not in it)
    shown = json.dumps(json.loads(out)["steps"]) if as_json else out
    assert "--memory" in shown and "--cpus" not in shown
    assert err.count("ninja: warning: podman cannot enforce --cpus on this host") == 1, err
    assert "not delegated to this user" in err


def test_every_limit_the_engine_can_apply_draws_no_warning(tmp_path: Any) -> None:
    from shinobi.backends.base import Invocation
    from shinobi_containers.podman import PodmanBackend

    backend = PodmanBackend({"binary": QUIET_ENGINE})
    backend.cgroup_reach = lambda: CgroupReach()  # type: ignore[method-assign]
    invocation = Invocation(
        step="s", argv=("true",), cwd=str(tmp_path), image="img", resources=Resources(cpus=1)
    )
    assert backend.render_for_job(invocation).warnings == ()
