"""Refusing to rewrite an output that a live process is still writing.

The case this exists for is a writer that outlived an earlier run (a leaked
container, a tool whose teardown never ran): letting a new step rewrite the
same path would interleave two products into one. Before a step runs, every
declared output that already exists (and every input the step rewrites in
place) is looked up among the open file descriptors in /proc. A descriptor
open for writing (``O_WRONLY``/``O_RDWR`` in ``/proc/PID/fdinfo``) refuses
the step, naming the pids; one open only for reading earns a warning, since
replacing a file under a reader is ordinary POSIX (the reader keeps the old
inode).

What this cannot see, so it reports fewer holders than exist: processes of
other users (unreadable /proc entries, which includes a rootful container's
payload), memory mappings (a file mapped and then closed holds no
descriptor), and anything on another host (a job on a cluster node writing a
shared filesystem). It is a safety net, not a lock.

Scanning /proc costs milliseconds (one readlink per open descriptor on the
host), far more than a cached step, so one scan is shared by the steps
checked within :data:`SNAPSHOT_AGE` seconds. A holder found in a shared scan
is confirmed afresh before anything is refused or warned about; a writer
that opened the path since the scan can be missed, like the blind spots above.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from shinobi.backends.base import Invocation, PathUse
from shinobi.errors import ShinobiError
from shinobi.harvest import harvest

__all__ = [
    "SNAPSHOT_AGE",
    "Holder",
    "LiveWriterError",
    "OutputGuard",
    "command_of",
    "find_holders",
    "writers_among",
]

#: Seconds a /proc scan is reused for by later checks.
SNAPSHOT_AGE = 1.0

_ACCESS_MODE = 0o3
_WRITE_MODES = (os.O_WRONLY, os.O_RDWR)


class LiveWriterError(ShinobiError):
    """A step would rewrite a path that a live process is writing."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class Holder:
    """A live process with a path (or something inside it) open."""

    pid: int
    path: str
    writing: bool
    command: str

    def describe(self) -> str:
        return f"pid {self.pid} ({self.command})"


def command_of(pid: int) -> str:
    """``pid``'s command line, shortened, on one line, for a message (``?``: it has
    just ended). A ``python -c`` program's line breaks broke a warning's one line."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read(200)
    except OSError:
        return "?"
    text = " ".join(raw.replace(b"\0", b" ").decode(errors="replace").split())
    return (text[:60] + "...") if len(text) > 60 else (text or "?")


def _writing(pid: int, fd: str) -> bool | None:
    """Whether descriptor ``fd`` of ``pid`` is open for writing; None if it is gone."""
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as fh:
            for line in fh:
                if line.startswith(b"flags:"):
                    return int(line.split()[1], 8) & _ACCESS_MODE in _WRITE_MODES
    except (OSError, ValueError, IndexError):
        return None
    return None


def _open_files(pids: Iterable[int] | None = None) -> dict[str, list[tuple[int, str]]]:
    """Every open descriptor's target path -> [(pid, fd)], this process excluded."""
    me = os.getpid()
    if pids is None:
        pids = (int(e) for e in os.listdir("/proc") if e.isdigit())
    found: dict[str, list[tuple[int, str]]] = {}
    for pid in pids:
        if pid == me:
            continue
        base = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(base)
        except OSError:  # gone, or another user's: a documented blind spot
            continue
        for fd in fds:
            try:
                target = os.readlink(f"{base}/{fd}")
            except OSError:
                continue
            if target.startswith("/") and not target.endswith(" (deleted)"):
                found.setdefault(target, []).append((pid, fd))
    return found


def _matches(
    table: dict[str, list[tuple[int, str]]], paths: Iterable[tuple[str, bool]]
) -> list[tuple[str, int, str]]:
    """(held path, pid, fd) for every descriptor on one of ``paths`` or, for a
    directory, inside one; ``paths`` are (canonical path, is a directory)."""
    hits: list[tuple[str, int, str]] = []
    for path, is_dir in paths:
        hits.extend((path, pid, fd) for pid, fd in table.get(path, ()))
        if not is_dir:
            continue
        inside = path.rstrip("/") + "/"
        for target, holders in table.items():
            if target.startswith(inside):
                hits.extend((target, pid, fd) for pid, fd in holders)
    return hits


def find_holders(paths: Iterable[str]) -> list[Holder]:
    """Live processes holding one of ``paths`` (or anything below it) open, fresh."""
    real = [(os.path.realpath(p), os.path.isdir(p)) for p in paths]
    return _confirm(_matches(_open_files(), real))


def writers_among(pids: Iterable[int], uses: Iterable[PathUse]) -> list[Holder]:
    """Which of ``pids`` have a path a step writes (``uses``) open for writing, fresh.

    After a step's command has exited, a process it left running that still
    writes its output means the product is not finished (see
    :mod:`shinobi.backends.process`); only the step's own processes are read.
    """
    pids = list(pids)
    if not pids:
        return []
    paths = _checked_paths(uses, _Canonical())
    if not paths:
        return []
    return [h for h in _confirm(_matches(_open_files(pids), paths)) if h.writing]


def _confirm(hits: list[tuple[str, int, str]]) -> list[Holder]:
    holders: dict[tuple[int, str], Holder] = {}
    for target, pid, fd in hits:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != target:
                continue  # closed (and maybe reused) since the scan
        except OSError:
            continue
        writing = _writing(pid, fd)
        if writing is None:
            continue
        key = (pid, target)
        previous = holders.get(key)
        if previous is None or (writing and not previous.writing):
            holders[key] = Holder(pid, target, writing, command_of(pid))
    return sorted(holders.values(), key=lambda h: (h.path, h.pid))


class _Canonical:
    """Canonical paths (as /proc shows them) without a realpath() per output:
    a step's outputs mostly share a few directories, resolved once each.

    What is kept per directory is the text its entries' canonical paths start
    with (``os.path.join(realpath(parent), "")``), keyed by the path's text up
    to its last ``/``: one lookup and one concatenation per output, where
    ``os.path.split`` and ``os.path.join`` took more than the lstat.
    """

    def __init__(self) -> None:
        self._dirs: dict[str, str] = {}

    def __call__(self, path: str) -> tuple[str, bool] | None:
        """(canonical path, is a directory), or None when there is no file or
        directory there: nothing, or a device, FIFO or socket. Those are shared
        by design (a log linked to ``/dev/null`` has writers on every host), so
        a process writing one says nothing about a leaked step."""
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                target = os.stat(path).st_mode
                if not (stat.S_ISREG(target) or stat.S_ISDIR(target)):
                    return None
                return os.path.realpath(path), stat.S_ISDIR(target)
        except OSError:
            return None
        is_dir = stat.S_ISDIR(mode)
        if not (is_dir or stat.S_ISREG(mode)):
            return None
        whole = os.path.abspath(path)
        head, _, name = whole.rpartition("/")
        prefix = self._dirs.get(head)
        if prefix is None:  # the parent as os.path.split gives it, resolved
            parent = os.path.split(whole)[0]
            prefix = self._dirs[head] = os.path.join(os.path.realpath(parent), "")
        return prefix + name, is_dir


def _checked_paths(
    uses: Iterable[PathUse], canonical: Callable[[str], tuple[str, bool] | None]
) -> list[tuple[str, bool]]:
    """Existing paths a step rewrites, canonical, with whether each is a dir."""
    paths: list[tuple[str, bool]] = []
    for use in uses:
        if use.role != "output" and not use.mutable:
            continue
        for candidate in harvest(use.path) if use.pattern else [use.path]:
            found = canonical(candidate)
            if found is not None:
                paths.append(found)
    return paths


class OutputGuard:
    """The pre-run check a session runs before each step (see the module docstring)."""

    def __init__(self, warn: Callable[[str], None], snapshot_age: float | None = None) -> None:
        self.warn = warn
        self.snapshot_age = SNAPSHOT_AGE if snapshot_age is None else snapshot_age
        self._lock = threading.Lock()
        self._snapshot: dict[str, list[tuple[int, str]]] = {}
        self._taken = float("-inf")
        self._canonical = _Canonical()

    def _table(self) -> dict[str, list[tuple[int, str]]]:
        with self._lock:
            if time.monotonic() - self._taken > self.snapshot_age:
                self._snapshot = _open_files()
                self._taken = time.monotonic()
            return self._snapshot

    def check(self, invocation: Invocation) -> None:
        """Raise :class:`LiveWriterError` if a live process writes an output; warn on readers."""
        paths = _checked_paths(invocation.paths, self._canonical)
        if not paths:
            return
        hits = _matches(self._table(), paths)
        if not hits:  # nearly every step: no live process has an output open
            return
        holders = _confirm(hits)
        writers = [h for h in holders if h.writing]
        if writers:
            first = writers[0]
            others = f" (and {len(writers) - 1} more)" if len(writers) > 1 else ""
            pids = ", ".join(str(p) for p in sorted({w.pid for w in writers}))
            raise LiveWriterError(
                f"{first.path!r} is being written by"
                f" {first.describe()}{others}; stop pid(s) {pids} or wait for them to finish,"
                " then run again (the output was left untouched)"
            )
        for holder in holders:
            self.warn(
                f"step {invocation.step!r}: {holder.path!r} is open for reading by"
                f" {holder.describe()}; if the step rewrites it, that reader keeps the"
                " previous contents"
            )
