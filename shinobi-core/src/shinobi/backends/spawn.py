"""Starting a step's process: ``posix_spawn`` where it gives the same result, else subprocess.

``subprocess.Popen`` spends about as much of ninja's own time on a short step
as the rest of ninja does (its error pipe, its handle bookkeeping, its
descriptor sweep, all in Python). ``os.posix_spawnp`` starts the same process
from one C call, which matters when a recipe runs thousands of short tools.

It is used only where the step gets the same world as from Popen:

- the step runs in ninja's own working directory (Python's ``posix_spawn``
  has no way to change it in the child);
- the step's ``PATH`` is ninja's own, because ``posix_spawnp`` searches the
  parent's ``PATH`` where Popen searches the child's (a venv step puts its
  ``bin`` first, and gets Popen);
- the signals Python ignores for itself (SIGPIPE, SIGXFSZ) are reset to their
  defaults in the child, as Popen's ``restore_signals`` does, so ``yes | head``
  in a step ends quietly instead of printing "Broken pipe";
- every inheritable descriptor from 3 up is closed in the child, as Popen's
  ``close_fds`` does (Python opens files non-inheritable, but ninja may have
  inherited some, and C code loaded into it may open more). They are listed
  just before the spawn, so the spawn is not used while Python code of the
  user's runs in ninja's process on another thread (an in-process pystep, an
  orchestration function: see :func:`user_code`), which could open one in
  between; Popen closes everything in the child whenever it was opened.

One difference remains with glibc (2.36 here): its ``posix_spawn`` leaves
the two signals it reserves for itself (32 and 33) ignored in the child, and
no spawn attribute can reset them. Programs built on glibc install their own
handlers for those at start, and Go's runtime installs its own; a program
that relies on inheriting them at their default is the rare case that could
tell.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from typing import Protocol

__all__ = ["Child", "start", "user_code"]


class Child(Protocol):
    """What running a step needs of its process: the Popen subset ninja uses."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...


class _Spawned:
    """A child started by ``posix_spawn``, reaped like a Popen (signals as negative codes)."""

    __slots__ = ("pid", "returncode")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        while self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped elsewhere: nothing more can be known
                self.returncode = 0
                break
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


_RESTORED = tuple(
    getattr(signal, name) for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ") if hasattr(signal, name)
)
_PATH = b"PATH"
_users_lock = threading.Lock()
_users = 0


@contextlib.contextmanager
def user_code() -> Iterator[None]:
    """Mark Python code of the user's running in this process while the block runs.

    Until it returns, steps start through Popen (see the module docstring).
    """
    global _users
    with _users_lock:
        _users += 1
    try:
        yield
    finally:
        with _users_lock:
            _users -= 1


def _inheritable_descriptors() -> list[int] | None:
    """Descriptors from 3 up that a child would inherit (None: cannot tell)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return None
    found = []
    for name in names:
        fd = int(name)
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    found.append(fd)
            except OSError:  # the listing's own descriptor, closed by now
                pass
    return found


def _spawnable(cwd: str, env: dict[bytes, bytes]) -> bool:
    if _users or not hasattr(os, "posix_spawnp"):
        return False
    try:
        here = os.getcwd()
    except OSError:  # ninja's own directory is gone: Popen changes into the step's
        return False
    return cwd == here and env.get(_PATH) == os.environb.get(_PATH)


def start(
    argv: Sequence[str], *, cwd: str, env: dict[bytes, bytes], stdin: int, stdout: int, stderr: int
) -> Child:
    """Start ``argv`` in a session of its own, its streams on the given descriptors.

    Raises OSError when the program cannot be started (not found, not
    executable), as Popen does.
    """
    inheritable = _inheritable_descriptors() if _spawnable(cwd, env) else None
    if inheritable is not None:
        actions = [
            (os.POSIX_SPAWN_DUP2, stdin, 0),
            (os.POSIX_SPAWN_DUP2, stdout, 1),
            (os.POSIX_SPAWN_DUP2, stderr, 2),
            *((os.POSIX_SPAWN_CLOSE, fd) for fd in inheritable),
        ]
        try:
            pid = os.posix_spawnp(
                argv[0],
                list(argv),
                env,
                file_actions=actions,
                setsid=True,
                setsigdef=_RESTORED,
            )
        except NotImplementedError:  # a libc without POSIX_SPAWN_SETSID
            pass
        else:
            return _Spawned(pid)
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
        close_fds=True,
    )
