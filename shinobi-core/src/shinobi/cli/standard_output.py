"""Tell a standard output that refused a write from every other refusal of the machine.

``ninja runs > out.txt`` on a full disk, or with an I/O error there: what
ninja had to print is lost, and saying only "No space
left on device" would send the user to the wrong disk (ninja writes its run
records, its cache and its scripts elsewhere). A write to standard output
that fails raises :class:`StdoutUnwritable`, which names standard output; a
reader that went away (EPIPE, ``| head -1``) stays a :class:`BrokenPipeError`,
which is no failure at all.

For the console script, ``sys.stdout`` is replaced by :func:`guarded_stdout`
with a stream on the same descriptor that raises it, and writes through: a
failed write fails where it is made, never later in a flush at exit. A program
that calls :func:`shinobi.cli.main.main` itself keeps its own ``sys.stdout``.

Only ``io``, ``os`` and ``sys`` are imported: ``ninja --help`` stays instant.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator

__all__ = ["StdoutUnwritable", "guarded_stdout", "unwritable", "write_all"]


class StdoutUnwritable(OSError):
    """Standard output refused a write (a full disk, an I/O error): what was to
    be printed there is lost."""

    def __str__(self) -> str:
        return f"cannot write to standard output: {self.strerror}"


def unwritable(exc: OSError) -> OSError:
    """``exc``, raised by a write to standard output, as ninja tells it: a reader
    gone away stays a BrokenPipeError, every other refusal names standard output."""
    if isinstance(exc, BrokenPipeError | StdoutUnwritable):
        return exc
    return StdoutUnwritable(exc.errno, exc.strerror)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write ``data`` to ``fd``, which is standard output, to the last byte."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except OSError as exc:
            raise unwritable(exc) from None


class _Descriptor(io.RawIOBase):
    """Standard output's descriptor."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        write_all(self._fd, data)
        return len(data)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """While the block runs, ``sys.stdout`` raises :class:`StdoutUnwritable` when
    standard output refuses a write."""
    saved = sys.stdout
    if saved is not sys.__stdout__ or saved is None or _fileno(saved) != 1:
        yield  # closed, or not the process's own (a test's capture): not ours to replace
        return
    with contextlib.suppress(OSError, ValueError):
        saved.flush()  # what was printed before goes out first
    sys.stdout = io.TextIOWrapper(
        _Descriptor(1),
        encoding=getattr(saved, "encoding", None) or "utf-8",
        errors=getattr(saved, "errors", None) or "strict",
        write_through=True,  # nothing held back for a flush that could fail at exit
    )
    try:
        yield
    finally:
        sys.stdout = saved


def _fileno(stream: object) -> int | None:
    try:
        fd: int = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None
    return fd
