"""How a container's exit is read: out of memory, signals, refused limits."""

from __future__ import annotations

import signal

from shinobi.backends.base import BackendRun
from shinobi.failures import describe_failure
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
    assert interpret_run(run, engine="apptainer", limits=MEMORY).oom


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
        "docker could not run the step: docker: Error response from daemon:"
        " pull access denied for nosuch/image."
    )


def test_a_payload_exit_that_is_not_an_engine_error_keeps_its_own_last_line() -> None:
    run = engine_exit("docker", 3, "WARNING: IPv4 forwarding is disabled.\nbad input\n")
    assert describe_failure(run) == "exited with code 3: bad input"
