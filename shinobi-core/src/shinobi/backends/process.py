"""Spawning a step's process and tearing its whole session down.

Every step runs in its own session (``start_new_session``) so a Ctrl-C reaches
ninja alone; ninja then stops the step deliberately. Processes are found by
session id in /proc rather than by process group, because shells and tools move
grandchildren into groups of their own but rarely into new sessions; a process
that leaves the session with ``setsid()`` is still found by the teardown tag in
its environment (see :mod:`shinobi.teardown`).

The step's stdout and stderr go straight to its log files (no pipes, no reader
threads): this keeps per-step overhead near the cost of a fork/exec and means a
crash of ninja never loses a tool's output.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence

from shinobi import teardown
from shinobi.backends.base import BackendRun, RunControl

__all__ = [
    "MAX_CAPTURE",
    "read_log",
    "run_process",
    "session_members",
    "terminate_session",
]

#: The most of a log file read back into memory for wranglers and results.
MAX_CAPTURE = 16 * 1024 * 1024


def session_members(sid: int) -> list[int]:
    """Live (non-zombie) pids whose session id is ``sid``."""
    return teardown.process_table().members(sid, None)


def terminate_session(
    sid: int, grace: float, kill_wait: float | None = None, tag: str | None = None
) -> tuple[int, ...]:
    """SIGTERM every process of session ``sid`` (and every one carrying ``tag``),
    wait ``grace``, then SIGKILL.

    Returns only when they are all gone, or with the pids that survived
    SIGKILL for ``kill_wait`` seconds (a process in uninterruptible I/O; the
    default is :data:`shinobi.teardown.KILL_WAIT`).
    """
    table = teardown.process_table()
    return teardown.terminate(lambda: table.members(sid, tag), grace, kill_wait, table)


def read_log(path: str) -> str:
    """A log file's text, at most the last :data:`MAX_CAPTURE` bytes of it."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - MAX_CAPTURE))
            data = fh.read()
    except FileNotFoundError:
        return ""
    return data.decode("utf-8", errors="replace")


def _not_started(program: str, exc: OSError) -> BackendRun:
    """The run of a program the kernel would not start, in the user's terms."""
    if isinstance(exc, FileNotFoundError):
        code, reason = 127, f"command not found: {program}"
        message = f"command not found: {program!r} (is it installed and on PATH?)"
    elif isinstance(exc, PermissionError):
        code, reason = 126, f"permission denied: {program}"
        message = f"permission denied running {program!r} (is it executable?)"
    else:  # e.g. a script without a #! line (ENOEXEC)
        code, reason = 126, f"cannot run {program}: {exc.strerror}"
        message = f"cannot run {program!r}: {exc.strerror}"
    return BackendRun(returncode=code, stderr=message + "\n", reason=reason)


def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    control: RunControl,
    env: Mapping[str, str] | None = None,
    stdout_path: str | None = None,
    stderr_path: str | None = None,
    before_kill: Callable[[], None] | None = None,
) -> BackendRun:
    """Run ``argv`` in a new session, blocking; tear it down if the run is cancelled.

    ``env`` is the complete environment (None inherits ninja's). ``before_kill``
    runs first on cancellation, for payloads that are not our descendants
    (``docker rm -f`` of a container owned by containerd-shim).
    """
    workspace = None
    if stdout_path is None or stderr_path is None:
        workspace = teardown.StepWorkspace()
        stdout_path = stdout_path or os.path.join(workspace.path, "stdout")
        stderr_path = stderr_path or os.path.join(workspace.path, "stderr")
    if control.cancelled.is_set():
        if workspace is not None:
            workspace.close()
        return BackendRun(returncode=-signal.SIGTERM, signal=signal.SIGTERM, cancelled=True)
    tag = teardown.new_tag()
    child_env = dict(os.environ if env is None else env)
    child_env[teardown.TAG_VARIABLE] = tag
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=child_env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            if workspace is not None:
                workspace.close()
            return _not_started(argv[0], exc)

    survivors: tuple[int, ...] = ()
    # The stopper runs on the coordinating thread; this thread must not read
    # logs or remove the workspace until it has finished, or a tool that
    # outlived its leader would keep writing into files that are gone.
    state = threading.Lock()
    returned = False
    stopping = threading.Event()
    stopped = threading.Event()

    def stop() -> tuple[int, ...]:
        nonlocal survivors
        with state:
            if returned:
                return ()
            stopping.set()
        try:
            if before_kill is not None:
                try:
                    before_kill()
                except Exception as exc:  # the processes below still get stopped
                    control.warn(f"stopping the payload of {argv[0]!r} failed: {exc}")
            survivors = terminate_session(proc.pid, control.grace, tag=tag)
        finally:
            stopped.set()
        return survivors

    unregister = control.on_cancel(stop)
    try:
        returncode = proc.wait()
    finally:
        with state:
            returned = True
        unregister()
        if stopping.is_set():
            stopped.wait()
    run = BackendRun(
        returncode=returncode,
        stdout=read_log(stdout_path),
        stderr=read_log(stderr_path),
        signal=-returncode if returncode < 0 else None,
        cancelled=control.cancelled.is_set(),
        undying=survivors,
    )
    if workspace is not None:
        workspace.close(survivors)
    return run
