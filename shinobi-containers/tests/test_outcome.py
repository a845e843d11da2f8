"""How a container's exit is read: out of memory, signals, refused limits."""

from __future__ import annotations

import signal

import pytest

from shinobi.backends.base import BackendRun
from shinobi.failures import describe_failure
from shinobi_containers.engine_lines import DOCKER_LINES, split_engine_lines
from shinobi_containers.limits import LimitFlags
from shinobi_containers.outcome import interpret_run

MEMORY = LimitFlags(flags=("--memory", "67108864"), memory=64 * 1024 * 1024)
CPUS = LimitFlags(flags=("--cpus", "2"), cpus=2.0)
NONE = LimitFlags()
#: The exit codes each engine uses for its own errors, as its backend declares them.
ENGINE_ERRORS = {"docker": frozenset({125, 126, 127}), "apptainer": frozenset({255})}


def engine_exit(engine: str, code: int, stderr: str, limits: LimitFlags = NONE) -> BackendRun:
    """``interpret_run`` of an exit with ``stderr`` on ``engine``."""
    return interpret_run(
        BackendRun(returncode=code, stderr=stderr),
        engine=engine,
        limits=limits,
        engine_error_codes=ENGINE_ERRORS[engine],
    )


def test_success_is_left_alone() -> None:
    run = BackendRun(returncode=0)
    assert interpret_run(run, engine="docker", limits=MEMORY, oom_killed=False) is run


def test_exit_137_under_a_memory_limit_is_out_of_memory() -> None:
    run = interpret_run(BackendRun(returncode=137), engine="podman", limits=MEMORY)
    assert run.oom and run.signal == signal.SIGKILL and run.returncode == 137
    failure = describe_failure(run)
    assert failure is not None and "out of memory" in failure and "64MiB" in failure
    assert "podman --memory" in failure


def test_a_sigkill_death_under_a_memory_limit_is_out_of_memory() -> None:
    run = BackendRun(returncode=-9, signal=signal.SIGKILL)
    found = interpret_run(run, engine="apptainer", limits=MEMORY)
    # recorded as docker and podman record it (an audit found -9 against 137)
    assert found.oom and found.returncode == 137 and found.signal == signal.SIGKILL


def test_an_engine_client_killed_by_a_signal_is_recorded_as_128_plus_n() -> None:
    found = interpret_run(BackendRun(returncode=-15), engine="apptainer", limits=NONE)
    assert (found.returncode, found.signal, found.oom) == (143, signal.SIGTERM, False)


def test_exit_137_without_a_memory_limit_is_only_a_sigkill() -> None:
    run = interpret_run(
        BackendRun(returncode=137), engine="podman", limits=CPUS, signal_exit_codes=True
    )
    assert not run.oom and run.signal == signal.SIGKILL


def test_the_engines_verdict_counts_even_when_the_main_process_exited_zero() -> None:
    run = interpret_run(BackendRun(returncode=0), engine="docker", limits=MEMORY, oom_killed=True)
    assert run.oom and run.returncode == 137 and run.details["exit_code"] == 0
    assert describe_failure(run) is not None


def test_the_engines_verdict_counts_without_a_declared_limit() -> None:
    run = interpret_run(BackendRun(returncode=1), engine="docker", limits=NONE, oom_killed=True)
    assert run.oom and run.returncode == 1 and "host ran out" in (run.reason or "")


def test_128_plus_n_names_signal_n_where_the_engine_reports_signals_so() -> None:
    run = interpret_run(
        BackendRun(returncode=143), engine="docker", limits=NONE, signal_exit_codes=True
    )
    assert run.signal == signal.SIGTERM
    assert "SIGTERM" in (describe_failure(run) or "")


def test_128_plus_n_is_a_plain_exit_where_the_engine_reports_real_signals() -> None:
    run = interpret_run(BackendRun(returncode=143), engine="apptainer", limits=NONE)
    assert run.signal is None and "exited with code 143" in (describe_failure(run) or "")


def test_exit_codes_beyond_the_signal_range_are_not_signals() -> None:
    run = interpret_run(
        BackendRun(returncode=255), engine="docker", limits=NONE, signal_exit_codes=True
    )
    assert run.signal is None


def test_a_refused_limit_gets_its_cause_and_remedy_not_the_raw_message() -> None:
    stderr = (
        "FATAL:   container creation failed: while applying cgroups config: openat2"
        " /sys/fs/cgroup/user.slice/apptainer-3628201.scope/cpu.max: no such file or directory\n"
    )
    run = engine_exit("apptainer", 255, stderr, CPUS)
    reason = run.reason or ""
    assert "--cpus" in reason and "cpu cgroup controller" in reason
    assert 'enforce_resources = "auto"' in reason and "openat2" not in reason
    assert describe_failure(run) == reason


def test_unprivileged_limits_on_a_cgroup_v1_host_are_explained() -> None:
    stderr = (
        "FATAL: ... cannot use cgroups - system is not configured for cgroups v2 in unified mode"
    )
    run = engine_exit("apptainer", 255, stderr, MEMORY)
    assert "cgroups v2 in unified mode" in (run.reason or "")


def test_a_tool_failing_with_cgroup_in_its_output_is_not_a_refused_limit() -> None:
    run = interpret_run(
        BackendRun(returncode=2, stderr="cannot read cgroup stats"),
        engine="docker",
        limits=CPUS,
        engine_error_codes=frozenset({125, 126, 127}),
    )
    assert run.reason is None


def test_an_interrupted_run_is_left_as_interrupted() -> None:
    run = BackendRun(returncode=137, cancelled=True)
    assert interpret_run(run, engine="docker", limits=MEMORY, oom_killed=True) is run


def test_an_engine_error_is_told_by_the_engines_complaint_not_its_help_pointer() -> None:
    stderr = (
        "Unable to find image 'nosuch/image:1' locally\n"
        "docker: Error response from daemon: pull access denied for nosuch/image.\n"
        "See 'docker run --help'.\n"
    )
    run = engine_exit("docker", 125, stderr)
    assert describe_failure(run) == (
        "docker could not run the step: image 'nosuch/image:1' is not here, and fetching it"
        " failed (docker: Error response from daemon: pull access denied for nosuch/image.);"
        " check its name"
    )


def test_an_image_no_registry_could_be_reached_for_is_not_blamed_on_its_name() -> None:
    stderr = (
        "Unable to find image 'alpine:3' locally\n"
        'docker: Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp:'
        " lookup registry-1.docker.io on 10.0.0.53:53: no such host.\n"
        "See 'docker run --help'.\n"
    )
    said = describe_failure(engine_exit("docker", 125, stderr)) or ""
    assert "image 'alpine:3' is not here" in said and not said.endswith("check its name")
    assert "the registry could not be reached: check the network" in said


def test_a_payload_exit_that_is_not_an_engine_error_keeps_its_own_last_line() -> None:
    run = engine_exit("docker", 3, "WARNING: IPv4 forwarding is disabled.\nbad input\n")
    assert describe_failure(run) == "exited with code 3: bad input"


def test_an_unknown_flag_is_told_not_the_usage_line() -> None:
    stderr = (
        "unknown flag: --bogus-flag\n\nUsage:  docker run [OPTIONS] IMAGE [COMMAND] [ARG...]\n\n"
        "Run 'docker run --help' for more information\n"
    )
    assert engine_exit("docker", 125, stderr).reason == (
        "docker could not run the step: unknown flag: --bogus-flag"
    )


def test_a_daemon_away_in_the_middle_of_a_run_is_told_with_the_fix() -> None:
    # a backend a step function chooses is checked by no pre-run look at the daemon
    stderr = (
        "docker: Cannot connect to the Docker daemon at unix:///tmp/nosock. Is the docker"
        " daemon running?\n\nRun 'docker run --help' for more information\n"
    )
    assert engine_exit("docker", 125, stderr).reason == (
        "docker could not run the step: docker: Cannot connect to the Docker daemon at"
        " unix:///tmp/nosock. Is the docker daemon running?; start it, or point DOCKER_HOST"
        " at a running one"
    )


def test_an_image_apptainer_could_not_fetch_is_said_to_be_missing() -> None:
    stderr = (
        "FATAL:   Unable to handle docker://nosuch/image:1 uri: failed to get checksum for"
        " docker://nosuch/image:1: pinging container registry: no such host\n"
    )
    reason = engine_exit("apptainer", 255, stderr).reason or ""
    assert reason.startswith("apptainer could not run the step: image 'docker://nosuch/image:1'")
    assert "is not here" in reason and "check the network and the image's name" in reason


def test_an_image_that_is_not_here_is_said_before_why_it_could_not_be_fetched() -> None:
    docker = (
        "Unable to find image 'shinobi-test/busybx:latest' locally\n"
        'docker: Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp:'
        " lookup registry-1.docker.io: no such host.\nSee 'docker run --help'.\n"
    )
    reason = engine_exit("docker", 125, docker).reason or ""
    assert reason.startswith(
        "docker could not run the step: image 'shinobi-test/busybx:latest' is not here, and"
        " fetching it failed (docker: Error response from daemon"
    )
    podman = (
        "Trying to pull localhost/shinobi-test/busybx:latest...\nError: initializing source"
        " docker://localhost/shinobi-test/busybx:latest: pinging container registry localhost:"
        " connection refused\n"
    )
    reason = engine_exit("docker", 125, podman).reason or ""
    assert "image 'localhost/shinobi-test/busybx:latest' is not here" in reason
    ported = (  # an audit's: the registry's port took the tag's place in the name
        "Error: initializing source docker://localhost:5999/nope:1: pinging container"
        ' registry localhost:5999: Get "https://localhost:5999/v2/": connection refused\n'
    )
    reason = engine_exit("docker", 125, ported).reason or ""
    assert "image 'localhost:5999/nope:1' is not here" in reason


def test_a_command_podmans_init_cannot_start_is_said_to_be_missing() -> None:
    stderr = "ERROR (catatonit:6): failed to exec pid1: No such file or directory\n"
    run = engine_exit("docker", 1, stderr)
    assert run.returncode == 127
    assert run.reason == (
        "docker could not start the step's command: it is not in the image (or not executable"
        " there)"
    )


@pytest.mark.parametrize("engine", ["podman", "apptainer"])
def test_every_engine_names_the_command_that_is_not_in_the_image(engine: str) -> None:
    """podman said "it is not in the image" and apptainer gave its raw FATAL line."""
    stderr = {
        "podman": "ERROR (catatonit:6): failed to exec pid1: No such file or directory\n",
        "apptainer": 'FATAL:   "nosuchtool": executable file not found in $PATH\n',
    }[engine]
    codes = {"podman": frozenset({125, 126, 127}), "apptainer": frozenset({255})}[engine]
    run = interpret_run(
        BackendRun(returncode=127 if engine == "podman" else 255, stderr=stderr),
        engine=engine,
        limits=NONE,
        engine_error_codes=codes,
        program="nosuchtool",
    )
    assert run.returncode == 127
    assert run.reason == (
        f"{engine} could not start the step's command: 'nosuchtool' is not in the image (or"
        " not executable there)"
    )
    python = interpret_run(
        BackendRun(returncode=127, stderr=stderr.replace("nosuchtool", "python3")),
        engine=engine,
        limits=NONE,
        program="python3",
    )
    assert "@pystep runs in its image" in (python.reason or "")


@pytest.mark.parametrize(
    ("engine", "stderr"),
    [
        ("docker", "[FATAL tini (7)] exec ./noexec.sh failed: Permission denied\n"),
        ("podman", "ERROR (catatonit:6): failed to exec pid1: Permission denied\n"),
    ],
)
def test_a_command_that_may_not_be_executed_is_said_so(engine: str, stderr: str) -> None:
    """A script of the project without its x bit: docker said it "is not in the
    image", though it sat in the mounted working directory, and podman gave its
    init's raw line as the tool's exit 1."""
    run = interpret_run(
        BackendRun(returncode=126 if engine == "docker" else 1, stderr=stderr),
        engine=engine,
        limits=NONE,
        engine_error_codes=frozenset({125, 126, 127}),
        program="./noexec.sh",
    )
    assert run.returncode == 126
    assert run.reason == (
        f"{engine} could not start the step's command: permission denied: './noexec.sh' is"
        " not executable; if it is a script of yours, make it so (`chmod +x ./noexec.sh`)"
    )


def test_podmans_refusal_of_a_cpu_quota_under_a_millisecond_gives_values_and_remedy() -> None:
    stderr = "Error: CPU cfs quota cannot be less than 1ms (i.e. 1000)\n"
    tiny = LimitFlags(flags=("--cpus", "0.001"), cpus=0.001)
    run = interpret_run(
        BackendRun(returncode=126, stderr=stderr),
        engine="podman",
        limits=tiny,
        engine_error_codes=frozenset({125, 126, 127}),
    )
    assert (run.reason or "").startswith(
        "podman refused the value of the declared limit --cpus 0.001: "
    )
    assert "at least 0.01 cpus" in (run.reason or "")


@pytest.mark.parametrize(
    ("program", "hint"), [("wsclean", False), ("python3", True), ("/opt/bin/tool", False)]
)
def test_a_command_dockers_init_cannot_start_is_said_to_be_missing(
    program: str, hint: bool
) -> None:
    """tini's own line ("[FATAL tini (7)] exec X failed") read as the tool's failure."""
    stderr = f"[FATAL tini (7)] exec {program} failed: No such file or directory\n"
    run = engine_exit("docker", 127, stderr)
    assert run.returncode == 127
    reason = run.reason or ""
    assert reason.startswith(f"docker could not start the step's command: {program!r} is not in")
    assert ("python3" in reason and "@pystep" in reason) == hint


def test_apptainer_refusing_its_own_command_line_is_not_the_tools_exit() -> None:
    stderr = 'Error for command "exec": unknown flag: --bogus\n\nOptions for exec command:\n'
    reason = engine_exit("apptainer", 1, stderr).reason or ""
    assert reason == (
        'apptainer could not run the step: Error for command "exec": unknown flag: --bogus'
        " (check backend.apptainer.run_flags)"
    )


@pytest.mark.parametrize(
    ("engine", "code", "stderr"),
    [
        ("docker", 125, "docker: Error response from daemon: Minimum memory limit allowed is 6MB."),
        ("apptainer", 255, "FATAL:   cpus value must be in range 0.01 - 2"),
        ("docker", 125, "docker: Error response from daemon: Range of CPUs is from 0.01 to 2.00"),
    ],
)
def test_a_limit_value_the_engine_refuses_is_said_with_the_values(
    engine: str, code: int, stderr: str
) -> None:
    """docker and apptainer said only their own line, without the values or the remedy."""
    run = engine_exit(engine, code, stderr, MEMORY)
    reason = run.reason or ""
    assert reason.startswith(f"{engine} refused the value") and "--memory" in reason
    assert "Declare a memory above" in reason


BANNER = "WARNING: IPv4 forwarding is disabled. Networking will not work.\n"


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        (BANNER, "exited with code 3"),
        (f"{BANNER}the tool's own complaint\n", "exited with code 3: the tool's own complaint"),
        (f"the tool's own complaint\n{BANNER}", "exited with code 3: the tool's own complaint"),
    ],
)
def test_docker_s_banner_is_never_the_tool_s_last_word(stderr: str, said: str) -> None:
    """The backend takes the banner out of the tool's stderr before reading the exit."""
    tool, engine = split_engine_lines(stderr, DOCKER_LINES)
    assert engine == BANNER
    run = engine_exit("docker", 3, tool)
    assert describe_failure(run) == said


def test_apptainers_own_limit_on_a_long_command_line_is_explained() -> None:
    """8,000 directory inputs: apptainer's raw "engine configuration too big" and no fix."""
    said = (
        "FATAL:   container creation failed: while creating engine configuration:"
        " engine configuration too big > 1048448\n"
    )
    run = engine_exit("apptainer", 255, said)
    assert run.reason is not None
    assert run.reason.startswith("apptainer could not run the step: its command line and mounts")
    assert "group such inputs under one Directory input" in run.reason
