"""The behavioural suite every backend passes, whatever distribution ships it.

A plugin's tests subclass :class:`BackendConformance` (whose name pytest does
not collect) and set ``backend_name`` and, for container runtimes, ``image``::

    class TestDocker(BackendConformance):
        backend_name = "docker"
        image = "shinobi-test/busybox:latest"

Override :meth:`leftovers` to report anything of a run that is still alive on
the engine (containers, jobs); the interrupt test asserts it is empty.
Tests that need a capability the backend does not claim are skipped.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from shinobi.backends.base import Backend, BackendRun, Invocation, PathUse, RunControl
from shinobi.failures import describe_failure
from shinobi.resources import Resources
from shinobi.testing.plugin import require_backend

__all__ = ["BackendConformance"]


class BackendConformance:
    """Subclass as ``TestXxx`` and set ``backend_name`` (and ``image``)."""

    backend_name: ClassVar[str]
    image: ClassVar[str | None] = None
    settings: ClassVar[dict[str, Any]] = {}
    #: Seconds an interrupted step may take to be torn down.
    teardown_budget: ClassVar[float] = 30.0
    #: Exit codes a payload killed by SIGKILL may report through this engine.
    oom_memory: ClassVar[str] = "64MiB"

    @pytest.fixture
    def backend(self) -> Backend:
        return require_backend(self.backend_name, dict(self.settings))

    @pytest.fixture
    def workdir(self, tmp_path: Path) -> Path:
        """A directory the engine can see; override for engines needing shared storage."""
        tmp_path.chmod(0o777)
        return tmp_path

    def invocation(
        self, workdir: Path, script: str, *, paths: tuple[PathUse, ...] = (), **extra: Any
    ) -> Invocation:
        name = extra.pop("step", "conformance")
        return Invocation(
            step=name,
            argv=("/bin/sh", "-c", script),
            cwd=str(workdir),
            paths=(PathUse(str(workdir / "x"), "output", "workdir", "any"), *paths),
            image=self.image,
            run_id=f"conformance-{os.getpid()}",
            stdout_path=str(workdir / f"{name}.out"),
            stderr_path=str(workdir / f"{name}.err"),
            scratch_dir=str(workdir),
            **extra,
        )

    def run(self, backend: Backend, invocation: Invocation) -> BackendRun:
        return backend.run(invocation, RunControl(grace=2.0))

    def leftovers(self, backend: Backend, invocation: Invocation, tag: str) -> list[str]:
        """Anything of ``invocation`` still running: processes on this host whose
        command line carries ``tag`` (containers and single-node clusters run
        on this kernel too). Extend it with the engine's own listing."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    state = fh.read().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if tag in cmdline and state != b"Z":
                found.append(f"pid {entry}: {cmdline.strip()}")
        return found

    # -- the suite -----------------------------------------------------------
    def test_success(self, backend: Backend, workdir: Path) -> None:
        run = self.run(backend, self.invocation(workdir, "exit 0"))
        assert run.returncode == 0, run.stderr
        assert describe_failure(run) is None

    def test_exit_code_is_reported(self, backend: Backend, workdir: Path) -> None:
        run = self.run(backend, self.invocation(workdir, "echo bad >&2; exit 3"))
        assert run.returncode == 3
        failure = describe_failure(run)
        assert failure is not None and "3" in failure

    def test_stdout_and_stderr_are_captured_separately(
        self, backend: Backend, workdir: Path
    ) -> None:
        run = self.run(backend, self.invocation(workdir, "echo to-out; echo to-err >&2"))
        assert run.returncode == 0, run.stderr
        assert "to-out" in run.stdout and "to-err" not in run.stdout
        assert "to-err" in run.stderr and "to-out" not in run.stderr

    def test_stdout_reaches_the_step_log(self, backend: Backend, workdir: Path) -> None:
        invocation = self.invocation(workdir, "echo logged-line")
        self.run(backend, invocation)
        assert invocation.stdout_path is not None
        assert "logged-line" in Path(invocation.stdout_path).read_text()

    def test_signal_is_named(self, backend: Backend, workdir: Path) -> None:
        run = self.run(backend, self.invocation(workdir, "kill -TERM $$; sleep 5"))
        failure = describe_failure(run)
        assert failure is not None and "SIGTERM" in failure, (run.returncode, failure)

    def test_sigkill_is_called_out_as_likely_oom(self, backend: Backend, workdir: Path) -> None:
        run = self.run(backend, self.invocation(workdir, "kill -KILL $$; sleep 5"))
        failure = describe_failure(run)
        assert failure is not None and ("SIGKILL" in failure or "memory" in failure), failure

    def test_outputs_land_on_the_host(self, backend: Backend, workdir: Path) -> None:
        target = workdir / "made" / "deep" / "out.txt"
        output = PathUse(str(target), "output", "out", "file")
        script = f"mkdir -p '{target.parent}' && echo payload > '{target}'"
        run = self.run(backend, self.invocation(workdir, script, paths=(output,)))
        assert run.returncode == 0, run.stderr
        assert target.read_text().strip() == "payload"

    def test_arguments_survive_unharmed(self, backend: Backend, workdir: Path) -> None:
        nasty = 'it\'s a "test" $(touch /tmp/shinobi-pwned) `x` ; & | *'
        invocation = self.invocation(workdir, "printf '%s\\n' \"$0\"")
        invocation = Invocation(**{**_fields(invocation), "argv": (*invocation.argv, nasty)})
        run = self.run(backend, invocation)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == nasty

    def test_interrupt_leaves_nothing_running(self, backend: Backend, workdir: Path) -> None:
        if not backend.capabilities.interruptible:
            pytest.skip(f"{self.backend_name} does not claim interruptible runs")
        marker = workdir / "started"
        tag = f"shinobi-conformance-{os.getpid()}-{time.monotonic_ns()}"
        child = f"sh -c 'sleep 300; : {tag}'"
        script = f"touch '{marker}'; {child} & {child} & {child}; wait"
        invocation = self.invocation(workdir, script, step="interrupt")
        control = RunControl(grace=2.0)
        outcome: list[BackendRun] = []
        thread = threading.Thread(target=lambda: outcome.append(backend.run(invocation, control)))
        thread.start()
        deadline = time.monotonic() + self.teardown_budget
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the payload never started"
        survivors = control.cancel()
        thread.join(self.teardown_budget)
        assert not thread.is_alive(), "run() did not return after the interrupt"
        assert survivors == ()
        assert outcome and outcome[0].cancelled
        deadline = time.monotonic() + 5
        while self.leftovers(backend, invocation, tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert self.leftovers(backend, invocation, tag) == []

    def test_declared_memory_is_enforced(self, backend: Backend, workdir: Path) -> None:
        if not backend.capabilities.enforces_resources:
            pytest.skip(f"{self.backend_name} does not claim to enforce resources")
        script = "head -c 400000000 /dev/zero | tail > /dev/null; exit 0"
        invocation = self.invocation(workdir, script, resources=Resources(memory=self.oom_memory))
        run = self.run(backend, invocation)
        assert run.returncode != 0
        assert run.oom, (run.returncode, run.reason, run.stderr[-500:])
        failure = describe_failure(run)
        assert failure is not None and "memory" in failure


def _fields(invocation: Invocation) -> dict[str, Any]:
    return {name: getattr(invocation, name) for name in invocation.__dataclass_fields__}
