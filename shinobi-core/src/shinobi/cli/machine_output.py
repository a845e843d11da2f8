"""Keep stdout for the document when a command prints one for machines.

``ninja run --json``, ``--dryrun --json``, ``ninja graph`` (every format: dot
for Graphviz, mermaid, json, text a script may read) and ``ninja compile``
(its scripts) promise that stdout is what a program reads. Much runs meanwhile
that may print: the recipe module at import time, pysteps called in this
process, libraries and C extensions writing to file descriptor 1. For the
whole command, from the parsing of its arguments (when the recipe module is
imported) to its end, file descriptor 1 and ``sys.stdout`` therefore point
at stderr, and the document alone is written to a private duplicate of the
real stdout. Both are put back afterwards, so a program that calls
``shinobi.cli.main.main([...])`` in-process has its stdout back.

Only ``os``, ``sys`` and ``click`` are imported: ``ninja --help`` stays instant.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

import click

from shinobi.cli.standard_output import StdoutUnwritable, fileno_of, write_all
from shinobi.cli.top_help import quiet_stdout

__all__ = [
    "MachineOutputCommand",
    "asks_for",
    "emit",
    "json_document",
    "printing_a_record",
    "stdout_for_machines",
]

#: Writes the document while a command owns stdout for machines, else None.
_sink: Callable[[str], None] | None = None


def emit(text: str, nl: bool = True) -> None:
    """Print ``text`` (and a newline, unless not ``nl``) on the real stdout, the one
    the document belongs on."""
    if _sink is None:
        click.echo(text, nl=nl)
    else:
        _sink(text + "\n" if nl else text)


def _discard(text: str) -> None:
    """The sink of a document whose stdout failed: the rest of it goes nowhere."""


def _stop_printing() -> None:
    """Send the rest of what the command prints on stdout nowhere (its reader went
    away, or stdout refused a write), without failing again, at exit neither.
    (While stdout is kept for machines, ``sys.stdout`` is stderr: that stays.)"""
    global _sink
    if _sink is None:
        quiet_stdout()
    else:
        _sink = _discard


@contextlib.contextmanager
def printing_a_record(kept: Callable[[], str]) -> Iterator[None]:
    """Printing the account of something done and kept on record (a run, a launch).

    What cannot be printed takes nothing back from what was done: a reader gone
    away ends the printing quietly, and a stdout that refuses it (a full disk,
    closed) ends it with a warning saying where it is on record, ``kept()``.
    Either way the command keeps its own exit status, which the block's caller
    decides: a 74 would tell a wrapper that retries on it to run it all again.
    """
    try:
        yield
    except BrokenPipeError:
        _stop_printing()
    except StdoutUnwritable as exc:
        _stop_printing()
        with contextlib.suppress(OSError):
            click.echo(f"ninja: warning: {exc}; {kept()}", err=True)


def json_document(data: Any) -> str:
    """``data`` as strict JSON data, for a document a program parses, converted
    as the manifest's values are (see :mod:`shinobi.json_values`): a model as its
    JSON dump, a set as a sorted list."""
    import json

    from shinobi.json_values import json_data

    return json.dumps(json_data(data), indent=2, default=str, allow_nan=False)


def _flush(*streams: Any) -> None:
    for stream in streams:
        with contextlib.suppress(AttributeError, OSError, ValueError):  # closed, or None
            stream.flush()


def _sink_for(saved: TextIO | None, private: int | None) -> Callable[[str], None]:
    """Where the document goes: the duplicate of descriptor 1, or the replaced sys.stdout."""
    if private is not None and fileno_of(saved) == 1:
        fd = private
        encoding = getattr(saved, "encoding", None) or "utf-8"
        errors = getattr(saved, "errors", None) or "strict"

        def to_descriptor(text: str) -> None:
            write_all(fd, text.encode(encoding, errors))

        return to_descriptor

    def to_saved(text: str) -> None:
        if saved is not None:
            saved.write(text)
            saved.flush()

    return to_saved


@contextlib.contextmanager
def stdout_for_machines() -> Iterator[None]:
    """While the block runs, all that would reach stdout goes to stderr, except :func:`emit`.

    Where ``sys.stdout`` is file descriptor 1 the document is written to a
    duplicate of it; where something else replaced ``sys.stdout`` (a test
    runner's capture, an embedding program) the document goes to that object.
    """
    global _sink
    saved: TextIO | None = sys.stdout
    _flush(saved, sys.__stdout__)  # what was printed before belongs to stdout
    private: int | None = None
    with contextlib.suppress(OSError):  # descriptor 1 or 2 closed: nothing to divert
        private = os.dup(1)
        try:
            os.dup2(2, 1)
        except OSError:
            os.close(private)
            private = None
    previous_sink = _sink
    _sink = _sink_for(saved, private)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _flush(sys.stdout, saved, sys.__stdout__)  # buffered text goes to stderr, not stdout
        sys.stdout = saved
        _sink = previous_sink
        if private is not None:
            with contextlib.suppress(OSError):
                os.dup2(private, 1)
            os.close(private)


def asks_for(args: Sequence[str], option: str, value: str | None = None) -> bool:
    """Whether ``args`` hold the flag ``option`` (``value`` None), or ``option value``.

    ``option=value`` counts too; nothing after ``--`` does. Arguments are only
    looked at, not parsed: the command's parser is what judges them.
    """
    for i, arg in enumerate(args):
        if arg == "--":
            return False
        if value is None and arg == option:
            return True
        if value is not None:
            if arg == f"{option}={value}":
                return True
            if arg == option and i + 1 < len(args) and args[i + 1] == value:
                return True
    return False


class MachineOutputCommand(click.Command):
    """A command that owns stdout for machines when its arguments ask for a document.

    ``machine_options`` are (option, value) pairs, value None for a flag; any
    of them present makes the command run under :func:`stdout_for_machines`
    from the start of argument parsing, since a recipe command imports the
    user's module while it parses. ``--help`` keeps its ordinary stdout.
    """

    machine_options: tuple[tuple[str, str | None], ...] = (("--json", None),)

    def prints_for_machines(self, args: Sequence[str]) -> bool:
        """Whether ``args`` make stdout what a program reads: one of
        ``machine_options`` given (a command whose every output is read by
        programs answers True whatever they are)."""
        return any(asks_for(args, option, value) for option, value in self.machine_options)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        wanted = self.prints_for_machines(args)
        if not wanted or any(asks_for(args, name) for name in ctx.help_option_names):
            return super().parse_args(ctx, args)
        with contextlib.ExitStack() as diverted:
            diverted.enter_context(stdout_for_machines())
            rest = super().parse_args(ctx, args)
            ctx.call_on_close(diverted.pop_all().close)  # ends with the command
        return rest
