"""Copying step logs to the terminal for ``ninja logs``: as they are, or followed.

Two ways, kept apart from the command that finds the logs: a log printed once
passes as the step's own bytes (``ninja logs RUN STEP > file`` is its log), and
logs followed together (``--follow``) come line by line, each line whole and
titled with its log, however long it grows, while memory stays a chunk or two.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

__all__ = [
    "CHUNK",
    "CUT_MARK",
    "HELD_ROUNDS",
    "LINE_BOUND",
    "RESUMED_MARK",
    "HeldLine",
    "echo_logs",
]


#: How much of a log is read, and written, at a time: what ``ninja logs`` holds in
#: memory stays this size however big the log is (a debug flag's logs of several GB).
CHUNK = 1 << 20


def echo_logs(
    found: list[tuple[str, Path]],
    offsets: dict[Path, int],
    prefix: bool,
    partial: dict[Path, bytes] | None = None,
    final: bool = True,
    held: HeldLine | None = None,
) -> None:
    """Print what each of ``found`` holds past ``offsets`` (moved on), titled when several.

    Each log is copied in chunks of :data:`CHUNK` up to the size it had when
    opened (a log that grows faster than it is read waits for the next round of
    ``--follow`` rather than keeping the others waiting). ``prefix`` (a
    followed run whose logs interleave): see :func:`_echo_followed`. Either way
    the step's own bytes pass as they are, not decoded: a followed log is the
    same log (text in another encoding, binary output).
    """
    if prefix:
        if partial is None:  # nowhere to keep a line not ended: this read is the last
            partial, final = {}, True
        _echo_followed(found, offsets, partial, final, held)
        return
    for title, path in found:
        with path.open("rb") as fh:
            fh.seek(offsets.get(path, 0))
            # the bytes the step wrote, as they are: `ninja logs RUN STEP > file` is its
            # log (text in another encoding, binary output), not a UTF-8 rendering of it
            chunks = _chunks(fh, os.fstat(fh.fileno()).st_size)
            _echo_bytes(chunks, f"==> {title} <==" if len(found) > 1 else None)
            offsets[path] = fh.tell()


def _chunks(fh: Any, end: int) -> Iterator[bytes]:
    """The bytes of the open file ``fh`` from where it is up to ``end``, a chunk at a time."""
    while fh.tell() < end:
        chunk = fh.read(min(CHUNK, end - fh.tell()))
        if not chunk:  # cut shorter since it was opened
            return
        yield chunk


def _echo_bytes(chunks: Iterator[bytes], header: str | None) -> None:
    """Copy ``chunks`` to stdout; under ``header`` when given and there is something,
    ended by a line break then (the next header on a line of its own)."""
    last = b""
    for chunk in chunks:
        if header is not None and not last:
            click.echo(header)
        click.echo(chunk, nl=False)
        last = chunk
    if header is not None and last and not last.endswith(b"\n"):
        click.echo("")


#: How much of one line ``--follow`` prints in one piece while other logs wait for
#: it to end (64 MiB: a huge JSON line stays whole); past it, and after
#: :data:`HELD_ROUNDS` rounds, a line still going on is cut so that they get their turn.
LINE_BOUND = 64 << 20

#: How many rounds of ``--follow`` (a second or two each) a line that has not ended
#: may keep the other logs waiting: a progress bar that never breaks a line grows
#: slowly, and would hold them for hours before reaching :data:`LINE_BOUND`.
HELD_ROUNDS = 30

#: What ends a line cut to let other logs' lines through, and starts its rest.
CUT_MARK = b" [ninja: line cut, to show other logs; it goes on in a later line]"
RESUMED_MARK = b"[ninja: cut line resumed] "


@dataclass
class HeldLine:
    """The followed log whose line has been printed in part (its first :data:`CHUNK`
    and on): until that line ends nothing else is printed, or its pieces would come
    apart. ``written`` counts its bytes printed, ``rounds`` the rounds it has held."""

    path: Path | None = None
    written: int = 0
    rounds: int = 0

    def start(self, path: Path, written: int) -> None:
        """The line of ``path`` has begun to be printed, ``written`` bytes of it."""
        self.path, self.written, self.rounds = path, written, 0

    def end(self) -> None:
        """The line held has been printed to its end: no log is held."""
        self.path, self.written, self.rounds = None, 0, 0


def _echo_followed(
    found: list[tuple[str, Path]],
    offsets: dict[Path, int],
    partial: dict[Path, bytes],
    final: bool,
    held: HeldLine | None,
) -> None:
    """Print each line of ``found`` past ``offsets`` with its log's title, whole.

    The part of a line not yet ended waits in ``partial`` for the rest (a UTF-8
    character cut between two reads came out as two replacement characters)
    for one round: if the next brings no line break, what has come of it is
    printed as a line then, and its rest comes as a line of its own. A progress
    bar that never breaks a line (``\r``, or ``0%....10....20``), or a finished
    step's last line without a line break, showed nothing until the run
    ended. The ``final`` read prints it at once. A line that grows to :data:`CHUNK` is printed
    before it ends, so as not to hold it all: then ``held`` keeps the other logs
    waiting (unread, in their files) until it ends, its log read first in each
    round, so its pieces come one after another under one title. If it goes on
    past :data:`LINE_BOUND` or :data:`HELD_ROUNDS` rounds while another log has
    more, it is cut with :data:`CUT_MARK`, and its rest starts a line of its own
    after :data:`RESUMED_MARK`. Without ``held`` (nothing to remember it in), a
    line still going on is ended by this read.
    """
    line = HeldLine() if held is None else held
    if line.path is not None and all(path != line.path for _, path in found):
        _end_held(line)  # its log is gone: nothing more of it will come
    for title, path in sorted(found, key=lambda log: log[1] != line.path):  # the held first
        head = _titled(title)
        carry = partial.pop(path, b"")
        with path.open("rb") as fh:
            start = offsets.get(path, 0)
            fh.seek(start)
            chunks = _chunks(fh, os.fstat(fh.fileno()).st_size)
            rest = _echo_titled_lines(chunks, head, carry, path, line)
            offsets[path] = fh.tell()
        print_rest = final or _waited_a_round(carry, rest, offsets[path] - start)
        if line.path == path and (final or held is None):
            _end_held(line)
        elif line.path == path:
            if not _cut_held(line, found, offsets):
                return  # the others wait for its line to end
            rest = RESUMED_MARK
        if rest and not print_rest:
            partial[path] = rest
        elif rest:
            click.echo(head + rest)


def _waited_a_round(carry: bytes, rest: bytes, read: int) -> bool:
    """Whether the line not ended, ``rest``, began before this round (``carry``) and
    this round's ``read`` bytes brought it no line break (they all went into it)."""
    return bool(carry) and len(rest) - len(carry) == read


def _echo_titled_lines(
    chunks: Iterator[bytes], head: bytes, carry: bytes, path: Path, held: HeldLine
) -> bytes:
    """Print each whole line of ``carry`` and then ``chunks`` (of the log ``path``) after
    ``head``, a chunk's lines in one write; the part after the last line break is given back.

    A line longer than a chunk is printed in pieces of about that size, the first
    after ``head``, the others as they come: holding it whole would hold all of a
    log that never breaks a line. ``held`` says whose line is printed in part.
    """
    for chunk in chunks:
        if held.path == path:  # the rest of its line first, untitled
            end = chunk.find(b"\n") + 1
            click.echo(chunk[: end or len(chunk)], nl=False)
            if not end:
                held.written += len(chunk)
                continue
            held.end()
            chunk = chunk[end:]
        data = carry + chunk
        cut = data.rfind(b"\n") + 1
        if cut:
            lines = data[: cut - 1].split(b"\n")
            click.echo(b"".join(head + line + b"\n" for line in lines), nl=False)
        carry = data[cut:]
        if len(carry) >= CHUNK:
            click.echo(head + carry, nl=False)
            held.start(path, len(carry))
            carry = b""
    return carry


def _end_held(held: HeldLine) -> None:
    """End the line printed in part (its log ended, or will not be read on)."""
    click.echo("")
    held.end()


def _cut_held(held: HeldLine, found: list[tuple[str, Path]], offsets: dict[Path, int]) -> bool:
    """Cut the line printed in part, with :data:`CUT_MARK`, if it has held another log
    that has more to print for long enough (see :func:`_echo_followed`); say whether."""
    held.rounds += 1
    if held.written < LINE_BOUND and held.rounds < HELD_ROUNDS:
        return False
    if not any(_has_more(path, offsets) for _, path in found if path != held.path):
        return False  # nobody waits: the line stays whole
    click.echo(CUT_MARK)
    held.end()
    return True


def _has_more(path: Path, offsets: dict[Path, int]) -> bool:
    """Whether the log ``path`` holds more than was read of it."""
    try:
        return path.stat().st_size > offsets.get(path, 0)
    except OSError:
        return False


def _titled(title: str) -> bytes:
    """``[TITLE] `` as the bytes a followed line starts with: a name read from a
    file name that is not UTF-8 gives its bytes back as they were."""
    text = f"[{title}] "
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file name decodes to
        return text.encode("utf-8", "backslashreplace")
