"""Starting a step's process: ``posix_spawn`` where it gives the same result, else subprocess.

``subprocess.Popen`` spends about as much of ninja's own time on a short step
as the rest of ninja does (its error pipe, its handle bookkeeping, its
descriptor sweep, all in Python). ``os.posix_spawnp`` starts the same process
from one C call, which matters when a recipe runs thousands of short tools.

It is used only where it cannot behave differently from Popen:

- the step runs in ninja's own working directory (Python's ``posix_spawn``
  has no way to change it in the child);
- the step's ``PATH`` is ninja's own, because ``posix_spawnp`` searches the
  parent's ``PATH`` where Popen searches the child's (a venv step puts its
  ``bin`` first, and gets Popen);
- the signals Python ignores for itself (SIGPIPE, SIGXFSZ) are reset to their
  defaults in the child, as Popen's ``restore_signals`` does, so ``yes | head``
  in a step ends quietly instead of printing "Broken pipe".

Descriptors: Python opens every file non-inheritable (PEP 446), so the child
gets only what the spawn places on 0, 1 and 2, as with Popen's ``close_fds``,
unless some descriptor was made inheritable: one ninja inherited from whoever
started it, or one a library user's code opened so. Then the step gets Popen.
The ``ninja`` command owns its process and calls :func:`disown_inherited`
once, which keeps its inherited descriptors from its steps and spares the
check.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from typing import Protocol

__all__ = ["Child", "disown_inherited", "start"]


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
_owned = False


def _inheritable_descriptors() -> list[int]:
    """Descriptors from 3 up that a child would inherit."""
    found = []
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return [-1]  # cannot tell: assume there are
    for name in names:
        fd = int(name)
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    found.append(fd)
            except OSError:  # the listing's own descriptor, closed by now
                pass
    return found


def disown_inherited() -> None:
    """Keep every descriptor this process inherited from the steps it starts.

    For a process that is ninja's own (the command line), never for a library
    user's: it changes descriptors the process did not open.
    """
    global _owned
    for fd in _inheritable_descriptors():
        if fd >= 0:
            os.set_inheritable(fd, False)
    _owned = True


def _spawnable(cwd: str, env: dict[bytes, bytes]) -> bool:
    if not hasattr(os, "posix_spawnp") or cwd != os.getcwd():
        return False
    if env.get(_PATH) != os.environb.get(_PATH):
        return False
    return _owned or not _inheritable_descriptors()


def start(
    argv: Sequence[str], *, cwd: str, env: dict[bytes, bytes], stdin: int, stdout: int, stderr: int
) -> Child:
    """Start ``argv`` in a session of its own, its streams on the given descriptors.

    Raises OSError when the program cannot be started (not found, not
    executable), as Popen does.
    """
    if _spawnable(cwd, env):
        actions = [
            (os.POSIX_SPAWN_DUP2, stdin, 0),
            (os.POSIX_SPAWN_DUP2, stdout, 1),
            (os.POSIX_SPAWN_DUP2, stderr, 2),
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
