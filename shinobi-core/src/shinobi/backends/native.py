"""The native backend: the step's command as a local subprocess, no isolation."""

from __future__ import annotations

from shinobi.backends.base import Backend, BackendRun, Capabilities, Invocation, RunControl
from shinobi.backends.process import run_process

__all__ = ["NativeBackend", "step_environment"]


def step_environment(invocation: Invocation) -> dict[str, str] | None:
    """ninja's environment plus the step's own variables (None: inherit unchanged)."""
    if not invocation.env:
        return None
    import os

    env = dict(os.environ)
    env.update(invocation.env)
    return env


class NativeBackend(Backend):
    """Runs the command on this host. Declared resources limit nothing here."""

    name = "native"
    capabilities = Capabilities()
    settings_keys = frozenset()

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        return run_process(
            invocation.argv,
            cwd=invocation.cwd,
            control=control,
            env=step_environment(invocation),
            stdout_path=invocation.stdout_path,
            stderr_path=invocation.stderr_path,
            stdout_capture=invocation.stdout_capture,
            stderr_capture=invocation.stderr_capture,
            outputs=invocation.paths,
        )
