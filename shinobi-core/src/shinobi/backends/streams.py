"""A step's stdout and stderr: pipes drained into log files made on the first byte.

Creating a file is one of the dearest things a step does on a cluster or
laptop filesystem (a journalled inode, two directory entries per step): on
ext4 it costs more than starting the tool. Most short steps print nothing, so
a step's output goes through a pipe and its log file is created only when the
first byte arrives; a silent step leaves no log file behind. Every byte is
written to the log as soon as it is read, so what a tool printed before a
crash of ninja is on disk.

The thread that runs the step drains both pipes and watches for the step's
leader to exit (a pidfd, where the kernel has them); it does not wait for the
pipes to close, because a background process the step left behind may hold
them open for hours. What such a process prints later still reaches the log,
through a daemon thread, for as long as ninja runs.
"""

from __future__ import annotations

import os
import select
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shinobi.backends.spawn import Child

__all__ = ["LOGS_REFUSED", "MAX_CAPTURE", "TAIL_CAPTURE", "StreamLog", "pump"]

#: The most of a stream kept in memory, for a cab whose wranglers read it.
MAX_CAPTURE = 16 * 1024 * 1024
#: What is kept of a stream nothing reads whole: the tail a result keeps
#: (:data:`~shinobi.steps.result.RESULT_TAIL` characters, twice as many bytes,
#: so a cut stream still reads as cut) and the line a failure quotes. Each
#: running step holding 16 MiB a stream made ninja grow by gigabytes.
TAIL_CAPTURE = 512 * 1024

#: How often (seconds) the leader is polled where the kernel has no pidfd.
_POLL_INTERVAL = 0.05

_CHUNK = 65536
#: Appended to: an orchestration function that runs its cab again (a retry)
#: adds to the step's log instead of replacing the first attempt's output.
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC


#: How a log the disk refused is said: the run says it once for each folder and cause.
LOGS_REFUSED = "cannot write the logs in"


class StreamLog:
    """One stream of a step: its log file (created on first output) and its tail.

    ``path`` None keeps the stream in memory only. A run's log directory is
    new, so ``path`` exists only when the same step ran before in this run
    (``ctx.run`` called again), and is then added to. A log
    that cannot be written (a full disk) is reported once through ``warn`` and
    the stream is still kept in memory, so the step's result carries it.

    The tail in memory is the last ``limit`` bytes and at most one chunk more,
    held in chunks of at most :data:`_CHUNK` bytes: dropping the oldest costs
    nothing however large the limit, where trimming one buffer moved the whole
    tail forward again and again.
    """

    def __init__(
        self, path: str | None, warn: Callable[[str], None], limit: int = MAX_CAPTURE
    ) -> None:
        self.path = path
        self._warn = warn
        self._limit = limit
        self._fd = -1
        self._failed = False
        #: Set at the pipe's end of file: no process holds the stream any more.
        self.ended = False
        self._chunks: deque[bytes] = deque()  # full chunks, oldest first
        self._held = 0  # their bytes
        self._last = bytearray()  # the newest chunk, filling (small writes gather here)
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            self._keep(data)
            if self.path is None or self._failed:
                return
            try:
                if self._fd < 0:
                    self._fd = os.open(self.path, _FLAGS, 0o644)
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError as exc:
                self._failed = True
                # said of the folder, once a run (see Session): a full disk refuses
                # every step's logs, and one line each buried the first
                self._warn(
                    f"{LOGS_REFUSED} {os.path.dirname(self.path)} ({exc.strerror}): what"
                    " steps print from here on is not kept there (`ninja logs` says"
                    " which logs were cut)"
                )
                from shinobi.local_runs import note_cut_log

                note_cut_log(self.path, exc.strerror or str(exc))  # for `ninja logs` to say

    def _keep(self, data: bytes) -> None:
        """Add ``data`` to the tail, dropping the oldest chunks it no longer needs."""
        view = memoryview(data)[max(0, len(data) - self._limit) :]
        if len(self._last) + len(view) > _CHUNK:
            self._close_last()
        if len(data) == len(view) == _CHUNK and isinstance(data, bytes):  # a full read: no copy
            self._push(data)
        elif len(view) > _CHUNK:  # a large write (a pystep's): cut, to be dropped piecemeal
            for start in range(0, len(view), _CHUNK):
                self._push(bytes(view[start : start + _CHUNK]))
        else:
            self._last += view
        while self._chunks and self._held + len(self._last) - len(self._chunks[0]) >= self._limit:
            self._held -= len(self._chunks.popleft())

    def _close_last(self) -> None:
        if self._last:
            self._push(bytes(self._last))
            self._last.clear()

    def _push(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._held += len(chunk)

    def text(self) -> str:
        with self._lock:
            if not self._chunks and not self._last:  # most steps print nothing
                return ""
            kept = memoryview(b"".join((*self._chunks, self._last)))
            return str(kept[-self._limit :], "utf-8", "replace")

    def close(self) -> None:
        """Close the log file, if the stream ever wrote one (the stream has ended)."""
        with self._lock:
            self.ended = True
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:  # ENOSYS on kernels before 5.3
        return None
    return fd


def _read_into(fd: int, pipes: dict[int, StreamLog]) -> bool:
    """Move one read's worth of pipe ``fd`` into its log; False when there is no more now.

    At end of file the pipe and its log are closed and ``fd`` leaves ``pipes``.
    """
    try:
        data = os.read(fd, _CHUNK)
    except BlockingIOError:  # a non-blocking pipe with nothing in it yet
        return False
    if not data:
        os.close(fd)
        pipes.pop(fd).close()
        return False
    pipes[fd].write(data)
    return True


def _drain_until_eof(pipes: dict[int, StreamLog]) -> None:
    """Pump pipes a lingering process still holds, until it closes them."""
    poller = select.poll()
    for fd in pipes:
        os.set_blocking(fd, True)
        poller.register(fd, select.POLLIN)
    while pipes:
        for fd, _ in poller.poll():
            if not _read_into(fd, pipes):
                poller.unregister(fd)


def pump(proc: Child, pipes: dict[int, StreamLog], writers: tuple[int, ...] = ()) -> int:
    """Drain ``pipes`` (read end -> log) until ``proc`` exits; return its exit status.

    ``writers`` are ninja's own copies of the pipes' write ends, which pump
    closes. Where the kernel has pidfds they stay open until the leader has
    exited: the pipes then never report end of file while the step runs, so a
    step wakes ninja once, when it exits, instead of once when its streams
    close and again when it is gone (on a VM every wake-up costs about as much
    as the rest of ninja's work for the step). Without a pidfd they are
    closed at once, and the pipes' end of file tells when the step is done.

    The logs of pipes that reached end of file are closed here; pipes a
    leftover process still holds are handed to a daemon thread that closes
    their logs when it is done.
    """
    open_pipes = dict(pipes)
    held = list(writers)
    pidfd = _pidfd(proc.pid)
    poller = select.poll()
    for fd in open_pipes:
        poller.register(fd, select.POLLIN)
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    else:
        _close(held)
    timeout = None if pidfd is not None else _POLL_INTERVAL * 1000
    try:
        while open_pipes:
            leader_gone = False
            for fd, _ in poller.poll(timeout):
                if fd == pidfd:
                    leader_gone = True
                elif not _read_into(fd, open_pipes):
                    poller.unregister(fd)  # blocking pipes: no more means end of file
            if leader_gone or (pidfd is None and proc.poll() is not None):
                _close(held)
                if pidfd is not None:
                    poller.unregister(pidfd)
                _take_what_is_there(open_pipes, poller)
                break
    finally:
        _close(held)
        if pidfd is not None:
            os.close(pidfd)
    returncode = proc.wait()
    if open_pipes:
        threading.Thread(
            target=_drain_until_eof, args=(open_pipes,), name="shinobi-log-pump", daemon=True
        ).start()
    return returncode


def _close(fds: list[int]) -> None:
    """Close every descriptor of ``fds`` and empty it (so closing twice is harmless)."""
    while fds:
        os.close(fds.pop())


def _take_what_is_there(pipes: dict[int, StreamLog], poller: select.poll) -> None:
    """Read everything already written to ``pipes`` without waiting for more.

    ``poller`` watches exactly ``pipes``. A poll that waits for nothing says
    which hold data or are at end of file, and reading only those never blocks
    (a pipe a leftover process holds open, silent so far, is left to the
    drain): one system call for the step, where making each pipe non-blocking
    first cost one per pipe.
    """
    while pipes:
        ready = poller.poll(0)
        if not ready:
            return
        for fd, _ in ready:
            if not _read_into(fd, pipes):
                poller.unregister(fd)
