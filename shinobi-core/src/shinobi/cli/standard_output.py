"""Tell a standard output that refused a write from every other refusal of the machine.

``ninja runs > out.txt`` on a full disk, or with an I/O error there, or
``ninja runs >&-``: what ninja had to print is lost, and saying only "No space
left on device" would send the user to the wrong disk (ninja writes its run
records, its cache and its scripts elsewhere). A write to standard output
that fails raises :class:`StdoutUnwritable`, which names standard output; a
reader that went away (EPIPE, ``| head -1``) stays a :class:`BrokenPipeError`,
which is no failure at all.

For the console script, ``sys.stdout`` is replaced by :func:`guarded_stdout`
with a stream on the same descriptor that raises it, and writes through: a
failed write fails where it is made, never later in a flush at exit. A program
that calls :func:`shinobi.cli.main.main` itself keeps its own ``sys.stdout``.

Only ``codecs``, ``errno``, ``io``, ``os`` and ``sys`` are imported (each loaded by
Python itself before any command): ``ninja --help`` stays instant.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import io
import os
import sys
from collections.abc import Iterator

__all__ = [
    "StdoutUnwritable",
    "fileno_of",
    "guarded_stdout",
    "quiet_failing_stderr",
    "unwritable",
    "write_all",
]


class StdoutUnwritable(OSError):
    """Standard output refused a write (a full disk, an I/O error, closed): what
    was to be printed there is lost."""

    def __str__(self) -> str:
        return f"cannot write to standard output: {self.strerror}"


def unwritable(exc: OSError) -> OSError:
    """``exc``, raised by a write to standard output, as ninja tells it: a reader
    gone away stays a BrokenPipeError, every other refusal names standard output."""
    if isinstance(exc, BrokenPipeError | StdoutUnwritable):
        return exc
    return StdoutUnwritable(exc.errno, exc.strerror)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write ``data`` to ``fd``, which is standard output, to the last byte (a refusal
    raised as :func:`unwritable` says it; standard error's writer drops it)."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except OSError as exc:
            raise unwritable(exc) from None


class _Descriptor(io.RawIOBase):
    """Standard output's descriptor (None where it was closed when ninja started)."""

    def __init__(self, fd: int | None) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        if self._fd is None:
            raise io.UnsupportedOperation("standard output is closed")
        return self._fd

    def isatty(self) -> bool:
        return self._fd is not None and os.isatty(self._fd)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        if not data:
            return 0
        if self._fd is None:
            raise StdoutUnwritable(errno.EBADF, "it is closed")
        write_all(self._fd, data)
        return len(data)


def _hold_descriptor(number: int) -> None:
    """Put /dev/null on the closed descriptor ``number`` (1 or 2): else the next file
    ninja opens takes that number, and whatever writes to "standard output" there
    (a C library, a child that inherits it) writes into that file."""
    with contextlib.suppress(OSError):
        fd = os.open(os.devnull, os.O_WRONLY)
        if fd != number:
            os.dup2(fd, number)
            os.close(fd)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """While the block runs, ``sys.stdout`` raises :class:`StdoutUnwritable` when
    standard output refuses a write, or when it was closed from the start."""
    saved = sys.stdout
    if saved is not None and (saved is not sys.__stdout__ or fileno_of(saved) != 1):
        yield  # not the process's own stdout (a test's capture): not ours to replace
        return
    if saved is None:  # Python found descriptor 1 closed (`>&-`)
        _hold_descriptor(1)
    else:
        with contextlib.suppress(OSError, ValueError):
            saved.flush()  # what was printed before goes out first
    encoding = getattr(saved, "encoding", None) or "utf-8"
    sys.stdout = io.TextIOWrapper(
        _Descriptor(None if saved is None else 1),
        encoding=encoding,
        errors=_errors_for(encoding, getattr(saved, "errors", None) or "strict"),
        write_through=True,  # nothing held back for a flush that could fail at exit
    )
    try:
        yield
    finally:
        sys.stdout = saved


class _Diagnostics(io.RawIOBase):
    """Standard error, whose refused writes are dropped: it only says why."""

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return 2

    def isatty(self) -> bool:
        return os.isatty(2)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        with contextlib.suppress(OSError):
            write_all(2, data)
        return len(data)


def quiet_failing_stderr() -> None:
    """Make a standard error that refuses writes (closed with ``2>&-``, a full
    disk, ``2>/dev/full``, a reader gone) lose what it is told, and nothing else.

    A failed run's last lines raised there: the run then exited 70 ("internal
    error", said nowhere) or 74 rather than 1, and an interrupted one 70 rather
    than 130, so a wrapper retrying on those started the run again. Only the
    process's own stderr is replaced (a test's capture is left alone), for the
    rest of the process: what is said at exit is dropped the same way.
    """
    saved = sys.stderr
    if saved is not None and (saved is not sys.__stderr__ or fileno_of(saved) != 2):
        return
    if saved is None:  # Python found descriptor 2 closed (`2>&-`): hold it
        _hold_descriptor(2)
    else:
        with contextlib.suppress(OSError, ValueError):
            saved.flush()
    sys.stderr = io.TextIOWrapper(
        _Diagnostics(),
        encoding=getattr(saved, "encoding", None) or "utf-8",
        errors="backslashreplace",
        write_through=True,
    )


def _errors_for(encoding: str, errors: str) -> str:
    """How stdout writes what its encoding cannot say.

    Under a locale of another encoding than UTF-8 (Latin-1, on an old
    cluster) a step named ``ﬁ``, or a dry run's box-drawing lines, ended the
    command as an internal error. Such characters are escaped (``\\u2192``),
    as on stderr; a UTF-8 stdout keeps its own handling.
    """
    if errors == "strict" and codecs.lookup(encoding).name != "utf-8":
        codecs.register_error(_PLAIN, _plain)  # (registered again: the same handler)
        return _PLAIN
    return errors


#: The characters of ninja's own lines (a dry run's boxes, arrows) in ASCII.
_ASCII = str.maketrans(
    {"─": "-", "│": "|", "┌": "+", "┐": "+", "└": "+", "┘": "+", "→": "->", "…": "...", "—": "-"}
)
_PLAIN = "shinobi.plain"


def _plain(exc: UnicodeError) -> tuple[str, int]:
    """The error handler of a stdout that cannot say a character: ninja's own
    box and arrow characters in ASCII, any other escaped (``\\u2192``)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    said = exc.object[exc.start : exc.end].translate(_ASCII)
    return said.encode("ascii", "backslashreplace").decode("ascii"), exc.end


def fileno_of(stream: object) -> int | None:
    """The descriptor under ``stream``; None for a StringIO, a closed or missing stream."""
    try:
        fd: int = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None
    return fd
