"""Spawning a step's process and tearing its whole session down.

Every step runs in its own session (``start_new_session``) so a Ctrl-C reaches
ninja alone; ninja then stops the step deliberately. Processes are found by
session id in /proc rather than by process group, because shells and tools move
grandchildren into groups of their own but rarely into new sessions.

The step's stdout and stderr go straight to its log files (no pipes, no reader
threads): this keeps per-step overhead near the cost of a fork/exec and means a
crash of ninja never loses a tool's output.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence

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
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        rest = stat[stat.rfind(b")") + 2 :].split()
        # rest: state ppid pgrp session ...
        if len(rest) > 3 and int(rest[3]) == sid and rest[0] != b"Z":
            found.append(int(entry))
    return found


def _signal_all(pids: Sequence[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _wait_gone(sid: int, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        left = session_members(sid)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def terminate_session(sid: int, grace: float, kill_wait: float = 5.0) -> tuple[int, ...]:
    """SIGTERM every process of session ``sid``, wait ``grace``, then SIGKILL.

    Returns only when the session is empty, or with the pids that survived
    SIGKILL for ``kill_wait`` seconds (a process in uninterruptible I/O).
    """
    members = session_members(sid)
    if not members:
        return ()
    _signal_all(members, signal.SIGTERM)
    left = _wait_gone(sid, grace)
    if not left:
        return ()
    _signal_all(left, signal.SIGKILL)
    return tuple(_wait_gone(sid, kill_wait))


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
    temp_dir = None
    if stdout_path is None or stderr_path is None:
        temp_dir = tempfile.mkdtemp(prefix="shinobi-step-")
        stdout_path = stdout_path or os.path.join(temp_dir, "stdout")
        stderr_path = stderr_path or os.path.join(temp_dir, "stderr")
    if control.cancelled.is_set():
        return BackendRun(returncode=-signal.SIGTERM, signal=signal.SIGTERM, cancelled=True)
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                close_fds=True,
            )
        except FileNotFoundError:
            return BackendRun(
                returncode=127,
                stderr=f"command not found: {argv[0]!r} (is it installed and on PATH?)\n",
                reason=f"command not found: {argv[0]}",
            )
        except PermissionError:
            return BackendRun(
                returncode=126,
                stderr=f"permission denied running {argv[0]!r} (is it executable?)\n",
                reason=f"permission denied: {argv[0]}",
            )

    survivors: tuple[int, ...] = ()

    def stop() -> tuple[int, ...]:
        nonlocal survivors
        if before_kill is not None:
            with contextlib.suppress(Exception):
                before_kill()
        survivors = terminate_session(proc.pid, control.grace)
        return survivors

    unregister = control.on_cancel(stop)
    try:
        returncode = proc.wait()
    finally:
        unregister()
    run = BackendRun(
        returncode=returncode,
        stdout=read_log(stdout_path),
        stderr=read_log(stderr_path),
        signal=-returncode if returncode < 0 else None,
        cancelled=control.cancelled.is_set(),
        undying=survivors,
    )
    if temp_dir is not None:
        for path in (stdout_path, stderr_path):
            with contextlib.suppress(OSError):
                os.unlink(path)
        with contextlib.suppress(OSError):
            os.rmdir(temp_dir)
    return run
