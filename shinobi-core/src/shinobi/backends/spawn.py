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
  just before the spawn, so nothing may open one between the listing and
  the spawn: the spawn is used only while every other Python thread is
  ninja's own (named ``shinobi-*``, or the main thread while a top-level run
  holds it, see :func:`ninja_holds_main`) and none of them runs code of the
  user's (an in-process pystep, an orchestration function: see
  :func:`user_code`, which cannot begin while a spawn is under way). A
  thread a pystep left running, or a caller's own threads, mean Popen,
  which closes everything in the child whenever it was opened. Threads that
  C code starts without Python's knowledge are beyond this check.

  Listing them took about 35 us a step here (a sixth of ninja's own time
  for a short step), so while a run holds the main thread the listing is
  kept and only its members are checked again at each spawn (usually none).
  A new inheritable descriptor can then come only from code of the user's,
  so the listing is made afresh whenever that may have run: when a run
  begins, after every :func:`user_code` block, and after any spawn that
  found a thread that is not ninja's. Code of the user's that ninja calls
  outside those blocks (the validators of a step's models) must not make
  one; Python opens every file non-inheritable, so only ``os.dup2`` or
  ``set_inheritable`` there, or C code, could.

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
from typing import Literal, Protocol

__all__ = ["Child", "ninja_holds_main", "start", "user_code"]


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


#: The signals Popen's ``restore_signals`` resets (the names CPython uses; the
#: platform has the ones it has).
_RESTORED = tuple(
    getattr(signal, name) for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ") if hasattr(signal, name)
)
_PATH = b"PATH"
#: Held from the check that allows a spawn to the spawn itself; :func:`user_code`
#: takes it to count itself in, so no such code begins in between.
_lock = threading.Lock()


#: The inheritable descriptors the last listing found while a run held the
#: main thread; None: list them at the next spawn (see the module docstring).
_listed: list[int] | None = None


class _Count:
    """How many blocks of one kind are under way, changed under :data:`_lock`.

    ``forget`` says when the descriptor listing may be out of date from then
    on: as the first block begins (a run: the caller's code ran before it),
    or as any block ends (code of the user's: it may have opened one).
    """

    def __init__(self, forget: Literal["start", "end"]) -> None:
        self.value = 0
        self._forget_on_start = forget == "start"

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        global _listed
        with _lock:
            if self._forget_on_start and not self.value:
                _listed = None
            self.value += 1
        try:
            yield
        finally:
            with _lock:
                self.value -= 1
                if not self._forget_on_start:
                    _listed = None


_users = _Count(forget="end")
_held_mains = _Count(forget="start")


def user_code() -> contextlib.AbstractContextManager[None]:
    """Mark Python code of the user's running in this process while the block runs.

    Until it returns, steps start through Popen (see the module docstring).
    """
    return _users.held()


def ninja_holds_main() -> contextlib.AbstractContextManager[None]:
    """Mark the main thread as running (or waiting on) ninja's own code: a top-level run."""
    return _held_mains.held()


def _only_ninja_threads() -> bool:
    """Whether every other live Python thread is one of ninja's (see the module docstring)."""
    me, main = threading.current_thread(), threading.main_thread()
    for thread in threading.enumerate():
        if thread is me or thread.name.startswith("shinobi-"):
            continue
        if thread is main and _held_mains.value:
            continue
        return False
    return True


def _inheritable_descriptors() -> list[int] | None:
    """Descriptors from 3 up that a child would inherit (None: cannot tell, or
    one that posix_spawn cannot close).

    glibc refuses to close a descriptor at or above the soft ``nofile`` limit
    (EBADF), and a shell can hand ninja one (``exec 300>log; ulimit -n 256``):
    every step then failed "cannot run: Bad file descriptor". Popen closes it.
    """
    try:
        names = os.listdir("/proc/self/fd")
        closable = os.sysconf("SC_OPEN_MAX")
    except (OSError, ValueError):
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
    return None if closable > 0 and any(fd >= closable for fd in found) else found


def _still_inheritable(fd: int) -> bool:
    try:
        return os.get_inheritable(fd)
    except OSError:  # closed since it was listed
        return False


def _inheritable_now() -> list[int] | None:
    """The inheritable descriptors, from the kept listing where it holds (under :data:`_lock`).

    Outside a run that holds the main thread the caller's own code runs
    between spawns, so every spawn lists them.
    """
    global _listed
    if not _held_mains.value:
        return _inheritable_descriptors()
    if _listed is None:
        _listed = _inheritable_descriptors()
        return _listed
    _listed = [fd for fd in _listed if _still_inheritable(fd)]
    return _listed


def _spawnable(cwd: str, env: dict[bytes, bytes]) -> bool:
    """The conditions that do not change while the spawn is prepared."""
    if not hasattr(os, "posix_spawnp"):
        return False
    try:
        here = os.getcwd()
    except OSError:  # ninja's own directory is gone: Popen changes into the step's
        return False
    return cwd == here and env.get(_PATH) == os.environb.get(_PATH)


def _spawn(
    argv: Sequence[str], env: dict[bytes, bytes], streams: tuple[int, int, int]
) -> int | None:
    """The pid of ``argv`` started by posix_spawn, or None where only Popen may start it."""
    global _listed
    with _lock:
        if _users.value or not _only_ninja_threads():
            _listed = None
            return None
        inheritable = _inheritable_now()
        if inheritable is None:
            return None
        actions = [
            *((os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(streams)),
            *((os.POSIX_SPAWN_CLOSE, fd) for fd in inheritable),
        ]
        try:
            return os.posix_spawnp(
                argv[0], list(argv), env, file_actions=actions, setsid=True, setsigdef=_RESTORED
            )
        except NotImplementedError:  # a libc without POSIX_SPAWN_SETSID
            return None


def start(
    argv: Sequence[str], *, cwd: str, env: dict[bytes, bytes], stdin: int, stdout: int, stderr: int
) -> Child:
    """Start ``argv`` in a session of its own, its streams on the given descriptors.

    Raises OSError when the program cannot be started (not found, not
    executable), as Popen does.
    """
    pid = _spawn(argv, env, (stdin, stdout, stderr)) if _spawnable(cwd, env) else None
    if pid is not None:
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
