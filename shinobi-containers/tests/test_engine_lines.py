"""The engine's own stderr lines are not the tool's.

docker's client prints ``WARNING: IPv4 forwarding is disabled. Networking will
not work.`` for every container on the default network of a host without IP
forwarding. It reached the cab's wranglers as the tool's stderr, so a cab with
``Wrangler(r"^WARNING", "error")`` failed every docker step (and passed on
native, podman and apptainer). Now the backend moves the engine's known lines,
before and after the tool's, to ``BackendRun.engine_stderr``: wranglers and
the result's stderr have the tool's alone, the record keeps the engine's
apart, and the log file keeps both as they arrived.
"""

from __future__ import annotations

from pathlib import Path

from live_engines import image, live_backend
from pydantic import BaseModel

from shinobi.backends.base import BackendRun
from shinobi.config import AppConfig
from shinobi.failures import describe_failure
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Wrangler
from shinobi_containers.engine_lines import (
    APPTAINER_LINES,
    DOCKER_LINES,
    PODMAN_LINES,
    split_engine_lines,
)
from shinobi_containers.limits import LimitFlags
from shinobi_containers.outcome import interpret_run

IPV4 = "WARNING: IPv4 forwarding is disabled. Networking will not work.\n"

# -- the split ------------------------------------------------------------------


def test_docker_s_warning_before_the_tool_s_lines_is_the_engine_s() -> None:
    assert split_engine_lines(f"{IPV4}tool says\n", DOCKER_LINES) == ("tool says\n", IPV4)


def test_a_stderr_of_the_warning_alone_leaves_the_tool_nothing() -> None:
    assert split_engine_lines(IPV4, DOCKER_LINES) == ("", IPV4)
    assert split_engine_lines(IPV4.rstrip("\n"), DOCKER_LINES) == ("", IPV4.rstrip("\n"))


def test_the_tool_s_own_warning_stays_the_tool_s() -> None:
    stderr = "WARNING: low on disk\n"
    assert split_engine_lines(stderr, DOCKER_LINES) == (stderr, "")
    both = f"{IPV4}{stderr}"
    assert split_engine_lines(both, DOCKER_LINES) == (stderr, IPV4)


def test_the_warning_among_the_tool_s_lines_is_the_tool_s() -> None:
    """The client warns before it starts the container: in the middle, the tool said it."""
    stderr = f"first\n{IPV4}last\n"
    assert split_engine_lines(stderr, DOCKER_LINES) == (stderr, "")


def test_several_leading_and_trailing_engine_lines_are_taken() -> None:
    swap = (
        "WARNING: Your kernel does not support swap limit capabilities or the cgroup is not"
        " mounted. Memory limited without swap.\n"
    )
    tool, engine = split_engine_lines(f"{IPV4}{swap}a\nb\n{IPV4}", DOCKER_LINES)
    assert (tool, engine) == ("a\nb\n", f"{IPV4}{swap}{IPV4}")


def test_podman_s_log_lines_are_its_own_and_its_errors_are_kept() -> None:
    warn = "WARN[0000] The cgroupv2 manager is set to systemd but there is no user session\n"
    tool, engine = split_engine_lines(f"{warn}tool\nERRO[0001] cleanup failed\n", PODMAN_LINES)
    assert (tool, engine) == ("tool\nERRO[0001] cleanup failed\n", warn)


def test_apptainer_s_info_lines_are_its_own_and_its_warnings_are_kept() -> None:
    info = "INFO:    Converting SIF file to temporary sandbox...\n"
    stderr = f"{info}WARNING: passwd file doesn't exist in container\ntool\n"
    assert split_engine_lines(stderr, APPTAINER_LINES) == (stderr[len(info) :], info)


def test_nothing_is_taken_without_an_engine_pattern_or_text() -> None:
    assert split_engine_lines(IPV4, None) == (IPV4, "")
    assert split_engine_lines("", DOCKER_LINES) == ("", "")


def test_an_engine_error_on_a_failed_start_is_still_the_step_s_error() -> None:
    stderr = (
        f"{IPV4}docker: Error response from daemon: failed to create task: oops.\n"
        "Run 'docker run --help' for more information\n"
    )
    tool, engine = split_engine_lines(stderr, DOCKER_LINES)
    assert engine == IPV4
    run = interpret_run(
        BackendRun(returncode=125, stderr=tool, engine_stderr=engine),
        engine="docker",
        limits=LimitFlags(()),
        engine_error_codes=frozenset({125}),
    )
    assert describe_failure(run) == (
        "docker could not run the step: docker: Error response from daemon: failed to create"
        " task: oops."
    )


# -- live: docker on its default network ----------------------------------------


class In(BaseModel):
    out: Path


class Out(BaseModel):
    out: File


def _cab(script: str) -> Cab:
    return Cab(
        name="tool",
        command=["sh", "-c", script, "x"],
        inputs_model=In,
        outputs_model=Out,
        field_meta={"out": ParamMeta(positional=True)},
        image=image("docker"),
        wranglers=[Wrangler(r"^WARNING", "error")],
    )


def _run_on_default_network(script: str, tmp_path: Path) -> tuple[object, str]:
    """The step's result and its stderr log, run by docker on its default network
    (the testbed's ``--network none`` left out: the warning comes with the network)."""
    live_backend("docker")
    config = AppConfig.model_validate({"backend": {"docker": {}}})
    result = run_recipe(
        _cab(script),
        {"out": tmp_path / "out.txt"},
        backend="docker",
        config=config,
        cwd=tmp_path,
        use_cache=False,
    )
    logs = list(tmp_path.glob(".shinobi/runs/*/logs/*.err"))
    return result, "".join(log.read_text() for log in logs)


def test_docker_s_warning_fails_no_step_and_is_kept_apart(tmp_path: Path) -> None:
    result, log = _run_on_default_network('echo "all good" > "$1"; echo fine >&2', tmp_path)
    step = result.steps[0]  # type: ignore[attr-defined]
    assert result.ok, result.error  # type: ignore[attr-defined]
    assert (tmp_path / "out.txt").read_text() == "all good\n"
    assert step.stderr == "fine\n"
    if "IPv4 forwarding" in log:  # this host's docker warned: kept in the log and the record
        assert log == f"{IPV4}fine\n"
        assert step.details["engine_stderr"] == IPV4


def test_the_tool_s_own_warning_still_fails_the_step(tmp_path: Path) -> None:
    result, _ = _run_on_default_network('echo "WARNING: mine" >&2; : > "$1"', tmp_path)
    assert not result.ok  # type: ignore[attr-defined]
    assert result.error == "the tool reported an error: WARNING: mine"  # type: ignore[attr-defined]
