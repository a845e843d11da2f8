"""The conformance kit fails a backend that loses or misplaces a step's data.

Each broken backend below is native with one defect a third-party backend
was found to have; the kit's check for that defect must fail it (the same
checks pass for native itself: test_native_conformance).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi.backends.base import Backend, BackendRun, Invocation, RunControl
from shinobi.backends.native import NativeBackend
from shinobi.testing.conformance import BackendConformance


class _Kit(BackendConformance):
    backend_name = "native"
    teardown_budget = 2.0


class _IgnoresCwd(NativeBackend):
    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        return super().run(dataclasses.replace(invocation, cwd="/"), control)


class _DropsEnv(NativeBackend):
    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        return super().run(dataclasses.replace(invocation, env={}), control)


class _ExitModulo128(NativeBackend):
    """As Slurm accounting of some versions reports it: exit 200 as 72."""

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        run = super().run(invocation, control)
        run.returncode %= 128
        return run


class _NoStderrLog(NativeBackend):
    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        return super().run(dataclasses.replace(invocation, stderr_path=None), control)


class _HidesInputs(NativeBackend):
    """A staging that moves the declared inputs out of the step's sight."""

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        inputs = [use.path for use in invocation.paths if use.role == "input"]
        for path in inputs:
            os.rename(path, f"{path}.staged")
        try:
            return super().run(invocation, control)
        finally:
            for path in inputs:
                os.rename(f"{path}.staged", path)


class _TermOnly(NativeBackend):
    """Stops a run with SIGTERM alone, and waits for it to end, however long."""

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        proc = subprocess.Popen(invocation.argv, cwd=invocation.cwd, start_new_session=True)

        def terminate() -> tuple[int, ...]:
            os.killpg(proc.pid, signal.SIGTERM)
            return ()

        unregister = control.on_cancel(terminate)
        try:
            returncode = proc.wait()
        finally:
            unregister()
        return BackendRun(returncode, cancelled=control.cancelled.is_set())


Check = Callable[[BackendConformance, Backend, Path], None]


@pytest.mark.parametrize(
    ("broken", "check"),
    [
        (_IgnoresCwd, BackendConformance.test_runs_in_the_invocation_cwd),
        (_DropsEnv, BackendConformance.test_the_cab_s_environment_reaches_the_step),
        (_ExitModulo128, BackendConformance.test_an_exit_code_above_127_is_reported_whole),
        (_NoStderrLog, BackendConformance.test_stderr_reaches_the_step_log),
        (_HidesInputs, BackendConformance.test_declared_inputs_can_be_read),
        (
            _TermOnly,
            BackendConformance.test_a_payload_that_ignores_sigterm_is_killed_after_the_grace,
        ),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_the_kit_fails_a_backend_that_loses_data(
    broken: type[Backend], check: Check, tmp_path: Path
) -> None:
    with pytest.raises(AssertionError):
        check(_Kit(), broken(), tmp_path)
