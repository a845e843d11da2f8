"""What an in-process pystep prints goes to that step's logs, not to ninja's streams.

A pystep that runs in ninja's own process is a function call on one of
ninja's worker threads. Its ``print()`` would otherwise land on ninja's
stdout, where it corrupts ``ninja run --json`` and is missing from the
step's logs (``ninja logs``, the manifest, the StepResult), unlike the output
of any tool or out-of-process pystep.

Several pysteps may run at once on different threads, so the streams cannot
be swapped for the whole process while one runs. Instead ``sys.stdout`` and
``sys.stderr`` are replaced, once, by proxies that look up the calling
thread's capture (a :class:`threading.local`): a write from a thread running
a pystep goes to that step's :class:`StreamLog`, any other write to the stream
the proxy replaced. The binary stream under each (``sys.stdout.buffer``) is
routed the same way. Output from threads the pystep starts itself and writes
made below Python (C code writing to file descriptor 1 or 2) are not caught.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from shinobi.backends.streams import StreamLog

__all__ = ["captured", "install"]

_STREAMS = ("stdout", "stderr")
_local = threading.local()
_install_lock = threading.Lock()


def _capture() -> tuple[StreamLog, StreamLog] | None:
    logs: tuple[StreamLog, StreamLog] | None = getattr(_local, "logs", None)
    return logs


class _ThreadRouted:
    """``sys.stdout`` or ``sys.stderr``: the calling thread's step log, else what it replaced.

    Everything but writing (``encoding``, ``fileno``...) is the replaced
    stream's, so code that inspects the stream still sees a real one.
    """

    def __init__(self, stream: str, fallback: Any) -> None:
        self.stream = stream
        self._index = _STREAMS.index(stream)
        self._fallback = fallback
        self._binary: _BinaryRouted | None = None

    @property
    def buffer(self) -> Any:
        """The binary stream, routed by thread too: ``sys.stdout.buffer.write(b"...")``
        from a pystep went to ninja's own stdout, where it broke ``--json``, and
        was missing from the step's log. A stream that replaced Python's without
        one (``io.StringIO``) still has none."""
        if self._binary is None:
            self._binary = _BinaryRouted(self, self._fallback.buffer)
        return self._binary

    def _log(self) -> StreamLog | None:
        logs = _capture()
        return None if logs is None else logs[self._index]

    def write(self, text: str) -> int:
        log = self._log()
        if log is None:
            if self._fallback is None:  # no stream at all (pythonw): drop it, as Python would
                return len(text)
            written: int = self._fallback.write(text)
            return written
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        log.write(text.encode("utf-8", "backslashreplace"))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._log() is None and self._fallback is not None:
            self._fallback.flush()

    def isatty(self) -> bool:
        # A step's log is no terminal: progress bars and colours must not go into it.
        if self._log() is not None or self._fallback is None:
            return False
        return bool(self._fallback.isatty())

    def __getattr__(self, name: str) -> Any:
        fallback = self.__dict__.get("_fallback")
        if fallback is None:
            raise AttributeError(name)
        return getattr(fallback, name)


class _BinaryRouted:
    """``sys.stdout.buffer`` of a :class:`_ThreadRouted`: bytes to the calling
    thread's step log, else to the binary stream it stands in for.

    Code may keep the object it got (``out = sys.stdout.buffer`` at import),
    so the thread is looked up at every write, not when it was handed out.
    """

    def __init__(self, text: _ThreadRouted, fallback: Any) -> None:
        self._text = text
        self._fallback = fallback

    def write(self, data: Any) -> int:
        log = self._text._log()
        if log is None:
            written: int = self._fallback.write(data)
            return written
        chunk = bytes(memoryview(data))  # bytes, bytearray, memoryview; str refused as Python does
        log.write(chunk)
        return len(chunk)

    def writelines(self, lines: Iterable[Any]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._text._log() is None:
            self._fallback.flush()

    def isatty(self) -> bool:
        return self._text.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_fallback"], name)


def install() -> None:
    """Put the proxies in place as ``sys.stdout``/``sys.stderr``, unless they already are.

    Checked on every pystep rather than once: a test harness, or ``ninja``'s
    own machine-output mode, may have swapped the streams since.
    """
    with _install_lock:
        for stream in _STREAMS:
            current = getattr(sys, stream)
            if not (isinstance(current, _ThreadRouted) and current.stream == stream):
                setattr(sys, stream, _ThreadRouted(stream, current))


@contextlib.contextmanager
def captured(stdout: StreamLog, stderr: StreamLog) -> Iterator[None]:
    """Send this thread's Python-level stdout and stderr to ``stdout``/``stderr`` meanwhile."""
    install()
    previous = _capture()
    _local.logs = (stdout, stderr)
    try:
        yield
    finally:
        _local.logs = previous
