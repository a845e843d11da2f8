"""A container engine's own stderr lines, kept apart from the tool's.

A backend gives them as ``BackendRun.engine_stderr`` (docker's "IPv4
forwarding is disabled" warning): the step's record keeps them under
``details.engine_stderr``, and a failed step's account on the terminal shows
them after the tool's lines, marked with the engine's name, since a tool that
needed the network may have failed of just that.
"""

from __future__ import annotations

from shinobi.backends.base import BackendRun, Invocation
from shinobi.cli.run import _engine_said
from shinobi.outcome import result_of_run
from shinobi.steps.result import StepResult

IPV4 = "WARNING: IPv4 forwarding is disabled. Networking will not work.\n"


def _result(run: BackendRun, error: str | None = None) -> StepResult:
    invocation = Invocation(step="tool", argv=("tool",), cwd="/")
    return result_of_run("tool", run, invocation, "docker", 0.0, 1.0, outputs={}, error=error)


def test_the_record_keeps_the_engine_s_lines_apart_from_the_tool_s() -> None:
    result = _result(BackendRun(returncode=0, stderr="fine\n", engine_stderr=IPV4))
    assert result.stderr == "fine\n"
    assert result.details["engine_stderr"] == IPV4


def test_a_run_without_engine_lines_records_none() -> None:
    assert "engine_stderr" not in _result(BackendRun(returncode=0, stderr="x\n")).details


def test_a_failed_step_shows_its_engine_s_lines_marked() -> None:
    run = BackendRun(returncode=6, stderr="curl: could not resolve host\n", engine_stderr=IPV4)
    failed = _result(run, error="exited with code 6: curl: could not resolve host")
    assert _engine_said(failed) == f"  docker: {IPV4}"


def test_a_scattered_step_shows_its_failing_slice_s_engine_lines() -> None:
    good = _result(BackendRun(returncode=0))
    bad = _result(BackendRun(returncode=6, engine_stderr=IPV4), error="exited with code 6")
    step = StepResult(name="tool", status="failed", error="exited with code 6")
    step.slices = [good, bad]
    assert _engine_said(step) == f"  docker: {IPV4}"
    assert _engine_said(good) == ""
