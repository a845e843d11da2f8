"""Spawning a step's process and tearing its whole session down.

Every step runs in its own session (``start_new_session``) so a Ctrl-C reaches
ninja alone; ninja then stops the step deliberately. Processes are found by
session id in /proc rather than by process group, because shells and tools move
grandchildren into groups of their own but rarely into new sessions; a process
that leaves the session with ``setsid()`` is still found by the teardown tag in
its environment (see :mod:`shinobi.teardown`).

The step's stdout and stderr go through pipes into log files that are created
on the first byte (see :mod:`shinobi.backends.streams`): a silent step costs no
file, and what a tool printed is on disk as soon as ninja has read it.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Mapping, Sequence

from shinobi import teardown
from shinobi.backends.base import BackendRun, RunControl
from shinobi.backends.spawn import start
from shinobi.backends.streams import MAX_CAPTURE, StreamLog, pump

__all__ = [
    "MAX_CAPTURE",
    "read_log",
    "run_process",
    "session_members",
    "terminate_session",
]


def session_members(sid: int) -> list[int]:
    """Live (non-zombie) pids whose session id is ``sid``."""
    return teardown.process_table().members(sid, None)


def terminate_session(
    sid: int,
    grace: float,
    kill_wait: float | None = None,
    tag: str | None = None,
    hurry: threading.Event | None = None,
) -> tuple[int, ...]:
    """SIGTERM every process of session ``sid`` (and every one carrying ``tag``),
    wait ``grace``, then SIGKILL.

    Returns only when they are all gone, or with the pids that survived
    SIGKILL for ``kill_wait`` seconds (a process in uninterruptible I/O; the
    default is :data:`shinobi.teardown.KILL_WAIT`).
    """
    table = teardown.process_table()
    return teardown.terminate(lambda: table.members(sid, tag), grace, kill_wait, table, hurry)


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


_TAG_KEY = os.fsencode(teardown.TAG_VARIABLE)
_null_fd = -1


def _devnull() -> int:
    """One /dev/null for every step's stdin, opened once (the child gets a copy)."""
    global _null_fd
    if _null_fd < 0:
        _null_fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    return _null_fd


def _environment(env: Mapping[str, str] | None) -> dict[bytes, bytes]:
    """The child's environment as bytes, built for every step.

    Copying ``os.environ`` decodes and re-encodes every variable, and even
    ``os.environb`` goes through a Python-level mapping per item; CPython keeps
    the bytes in ``os.environ._data``, which copies in one C call. The public
    route is the fallback.
    """
    if env is None:
        data = getattr(os.environ, "_data", None)
        return dict(data) if isinstance(data, dict) else dict(os.environb)
    return {os.fsencode(k): os.fsencode(v) for k, v in env.items()}


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
    if control.stopping():
        return BackendRun(returncode=-signal.SIGTERM, signal=signal.SIGTERM, cancelled=True)
    tag = teardown.new_tag()
    child_env = _environment(env)
    child_env[_TAG_KEY] = tag.encode()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    stdout = StreamLog(stdout_path, control.warn)
    stderr = StreamLog(stderr_path, control.warn)
    try:
        proc = start(
            argv, cwd=cwd, env=child_env, stdin=_devnull(), stdout=out_write, stderr=err_write
        )
    except BaseException as exc:  # a ValueError (a NUL byte in argv) too: no pipe left open
        for fd in (out_read, err_read, out_write, err_write):
            os.close(fd)
        if not isinstance(exc, OSError):
            raise
        refused = _not_started(argv[0], exc)
        stderr.write(refused.stderr.encode())  # the log says why, as a tool would
        for log in (stdout, stderr):
            log.close()
        return refused

    survivors: tuple[int, ...] = ()
    # The stopper runs on the coordinating thread; this thread must not report
    # the step until it has finished, or the result would miss the survivors.
    # A stopper that starts before the step returned holds ``stopping`` (taken
    # under ``state``) until it is done; the step waits for it by taking it.
    state = threading.Lock()
    stopping = threading.Lock()
    returned = False

    def stop() -> tuple[int, ...]:
        nonlocal survivors
        with state:
            if returned:
                return ()
            stopping.acquire()
        try:
            if before_kill is not None:
                try:
                    before_kill()
                except Exception as exc:  # the processes below still get stopped
                    control.warn(f"stopping the payload of {argv[0]!r} failed: {exc}")
            survivors = terminate_session(proc.pid, control.grace, tag=tag, hurry=control.hurry)
        finally:
            stopping.release()
        return survivors

    unregister = control.on_cancel(stop)
    try:
        returncode = pump(proc, {out_read: stdout, err_read: stderr}, (out_write, err_write))
    finally:
        with state:
            returned = True
        unregister()
        with stopping:  # a stopper already under way finishes first
            pass
    return BackendRun(
        returncode=returncode,
        stdout=stdout.text(),
        stderr=stderr.text(),
        signal=-returncode if returncode < 0 else None,
        cancelled=control.stopping(),
        undying=survivors,
    )
