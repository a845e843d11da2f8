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

import contextlib
import os
import signal
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
        return [f"pid {pid}: {cmdline}" for pid, cmdline in _tagged_processes(tag)]

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
        assert "logged-line" in _log_text(invocation.stdout_path)

    def test_stderr_reaches_the_step_log(self, backend: Backend, workdir: Path) -> None:
        invocation = self.invocation(workdir, "echo logged-error >&2")
        self.run(backend, invocation)
        assert "logged-error" in _log_text(invocation.stderr_path)

    def test_runs_in_the_invocation_cwd(self, backend: Backend, workdir: Path) -> None:
        """Relative paths in a step's arguments resolve against its cwd."""
        here = workdir / "cwd-of-the-step"
        here.mkdir()
        here.chmod(0o777)
        invocation = self.invocation(workdir, "pwd -P")
        invocation = Invocation(**{**_fields(invocation), "cwd": str(here)})
        run = self.run(backend, invocation)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == os.path.realpath(here)

    def test_the_cab_s_environment_reaches_the_step(self, backend: Backend, workdir: Path) -> None:
        value = "a value, with spaces and $dollars"
        script = 'printf "%s\\n" "$SHINOBI_CONFORMANCE_VALUE"'
        invocation = self.invocation(workdir, script, env={"SHINOBI_CONFORMANCE_VALUE": value})
        run = self.run(backend, invocation)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == value

    def test_an_exit_code_above_127_is_reported_whole(
        self, backend: Backend, workdir: Path
    ) -> None:
        """Exit 200 is exit 200: not 72 (modulo 128), and no signal."""
        run = self.run(backend, self.invocation(workdir, "exit 200"))
        assert (run.returncode, run.signal) == (200, None)
        failure = describe_failure(run)
        assert failure is not None and "200" in failure, failure

    def test_declared_inputs_can_be_read(self, backend: Backend, workdir: Path) -> None:
        source = workdir / "inputs" / "data.txt"
        source.parent.mkdir()
        source.parent.chmod(0o777)
        source.write_text("input payload\n")
        source.chmod(0o644)
        declared = PathUse(str(source), "input", "data", "file", writable=False)
        run = self.run(backend, self.invocation(workdir, f"cat '{source}'", paths=(declared,)))
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "input payload"

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
        tag = self.tag()
        child = f"sh -c 'sleep 300; : {tag}'"
        self.interrupt(backend, workdir, f"{child} & {child} & {child}; wait", tag, grace=2.0)

    def test_a_payload_that_ignores_sigterm_is_killed_after_the_grace(
        self, backend: Backend, workdir: Path
    ) -> None:
        """A tool that traps SIGTERM (or is stuck) must still be gone once the grace
        period is over: the stop escalates to SIGKILL. (Ignoring a signal is
        inherited, so the children ignore it too.)"""
        tag = self.tag()
        payload = f"sh -c 'sleep 300; : {tag}'"
        self.interrupt(backend, workdir, payload, tag, grace=0.5, ignore_sigterm=True)

    def tag(self) -> str:
        """A word no other process's command line carries: what finds a run's leftovers."""
        return f"shinobi-conformance-{os.getpid()}-{time.monotonic_ns()}"

    def interrupt(
        self,
        backend: Backend,
        workdir: Path,
        payload: str,
        tag: str,
        *,
        grace: float,
        ignore_sigterm: bool = False,
    ) -> None:
        """Start ``payload``, cancel it once it runs, and assert that ``run()``
        returns cancelled with nothing of it left running (``tag`` marks its processes).
        ``ignore_sigterm``: the trap is set before the payload says it started.

        What a failing backend leaves running on this host is killed afterwards,
        so a red test does not leave ``sleep 300`` behind it.
        """
        if not backend.capabilities.interruptible:
            pytest.skip(f"{self.backend_name} does not claim interruptible runs")
        marker = workdir / "started"
        trap = "trap '' TERM; " if ignore_sigterm else ""
        script = f"{trap}touch '{marker}'; {payload}"
        invocation = self.invocation(workdir, script, step="interrupt")
        control = RunControl(grace=grace)
        outcome: list[BackendRun] = []
        thread = threading.Thread(
            target=lambda: outcome.append(backend.run(invocation, control)), daemon=True
        )
        thread.start()
        try:
            deadline = time.monotonic() + self.teardown_budget
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert marker.exists(), "the payload never started"
            survivors = control.cancel()
            thread.join(self.teardown_budget)
            assert not thread.is_alive(), (
                f"run() did not return within {self.teardown_budget}s of the interrupt: a"
                f" payload must be killed (SIGKILL) once the {grace}s grace period is over"
            )
            assert survivors == ()
            assert outcome and outcome[0].cancelled
            deadline = time.monotonic() + 5
            while self.leftovers(backend, invocation, tag) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert self.leftovers(backend, invocation, tag) == []
        finally:
            _kill_local(tag)

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


def _log_text(path: str | None) -> str:
    """What the step's log file at ``path`` holds; it must be there."""
    assert path is not None and os.path.exists(path), f"the step's log {path} was never written"
    return Path(path).read_text()


def _tagged_processes(tag: str) -> list[tuple[int, str]]:
    """The live (not zombie) processes of this host whose command line carries ``tag``."""
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
            found.append((int(entry), cmdline.strip()))
    return found


def _kill_local(tag: str) -> None:
    """SIGKILL what of a run is still alive on this host (see ``_tagged_processes``)."""
    for pid, _ in _tagged_processes(tag):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
