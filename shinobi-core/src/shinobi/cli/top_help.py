"""``ninja``'s own help, and what its command line is made of, without click.

``ninja --help`` is the command people type most to find their way, and
importing click is a third of its start-up. Everything the top-level help
shows lives here, in plain data that :mod:`shinobi.cli.main` builds its click
group from; :func:`fast_path` renders the same bytes click would from that
data, with the same layout rules (click's ``HelpFormatter``), so that
``ninja``, ``ninja --help`` and ``ninja -h`` need not load click at all.

It declines, and click answers, whenever it could not be sure of saying the
same: any other argument, shell completion asked for, ``SHINOBI_DEBUG`` set
(a failure would show click's traceback), no stream to write to, text that is
not ASCII (click may re-encode a misconfigured stream), a message catalog that
translates click's own words. The tests compare its
output with click's at every width click can choose, so the two cannot drift
apart unseen.
"""

from __future__ import annotations

import os
import sys

#: typing.TYPE_CHECKING, without importing typing: see shinobi/__init__.py.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from textwrap import TextWrapper

__all__ = [
    "COMMANDS",
    "DEBUG_HELP",
    "HELP",
    "HELP_OPTION_NAMES",
    "MAX_CONTENT_WIDTH",
    "fast_path",
    "program",
    "quiet_stdout",
]

#: name -> (module, attribute, one-line help). The help is here so that
#: ``ninja --help`` lists every command without importing any of them.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": (
        "shinobi.cli.run",
        "command",
        "Run a recipe here (or with --dryrun, show what would run).",
    ),
    "graph": (
        "shinobi.cli.graph",
        "command",
        "Print a recipe's graph as text, dot, mermaid or json.",
    ),
    "compile": (
        "shinobi.cli.compile",
        "command",
        "Compile a recipe to a cluster workflow; --submit to launch it.",
    ),
    "status": (
        "shinobi.cli.status",
        "command",
        "Show the state of a detached launch from its handle.",
    ),
    "runs": (
        "shinobi.cli.runs",
        "command",
        "List the runs and detached launches of this workspace.",
    ),
    "logs": (
        "shinobi.cli.logs",
        "command",
        "Show (or --follow) the logs of a run or a detached launch.",
    ),
    "cancel": ("shinobi.cli.cancel", "command", "Cancel every job of a detached launch."),
    "clean": (
        "shinobi.cli.clean",
        "command",
        "Remove finished launches' handles and logs, and old run folders.",
    ),
    "cache": ("shinobi.cli.cache", "group", "List, remove or prune step-cache entries."),
    "report": (
        "shinobi.cli.report",
        "command",
        "Write an HTML report of a run made with --provenance.",
    ),
    "backends": (
        "shinobi.cli.backends",
        "command",
        "List installed backends and whether each is usable here.",
    ),
    "doctor": (
        "shinobi.cli.backends",
        "doctor",
        "Check this host: backends, offload engines, launchers, config.",
    ),
    "config": (
        "shinobi.cli.config",
        "group",
        "Show the effective configuration and where each value came from.",
    ),
}

#: The help of ``ninja`` itself, as click shows it (already dedented, as
#: click's ``inspect.cleandoc`` would leave it).
HELP = """\
shinobi runs pipelines of command-line tools on this machine, in containers,
or on Slurm (Kubernetes is planned), from one recipe.

\b
Quick start (in a shinobi checkout, where examples/ is):
  ninja run examples/offload_demo.py:pipe --target /tmp/made.ms
  ninja run examples/offload_demo.py:pipe --target /tmp/made.ms --dryrun
  ninja run FILE.py:NAME --help      (the recipe's own inputs as options)

Exit codes: 0 success, 1 a step failed, 2 bad usage or invalid recipe,
74 the machine or the scheduler refused or did not answer, 70 a bug of
ninja's, 128+N when stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP)."""

DEBUG_HELP = "Show tracebacks instead of one-line errors."

HELP_OPTION_NAMES = ("-h", "--help")

#: click's ``max_content_width`` for every ninja command.
MAX_CONTENT_WIDTH = 100


def program(argv0: str) -> str:
    """``shinobi`` when called by that name, else ``ninja`` (``python -m shinobi.cli`` too)."""
    return "shinobi" if os.path.basename(argv0).startswith("shinobi") else "ninja"


def quiet_stdout() -> None:
    """Point stdout at /dev/null once its reader went away, so that nothing more,
    not even the flush at exit, fails on it."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def fast_path(argv: list[str]) -> Callable[[], int] | None:
    """What shows ``ninja``'s own help for this command line without click; None
    where click must answer (see the module's docstring for when)."""
    args = argv[1:]
    if args and args != ["--help"] and args != ["-h"]:
        return None
    prog = program(argv[0]) if argv else "ninja"
    stream = sys.stdout if args else sys.stderr  # bare `ninja`: help, but on stderr
    if (
        stream is None
        or f"_{prog.upper()}_COMPLETE" in os.environ  # click's shell completion
        or "SHINOBI_DEBUG" in os.environ
        or not HELP.isascii()
        or not all(help_text.isascii() for *_, help_text in COMMANDS.values())
        or not _untranslated()
    ):
        return None
    if args:
        return lambda: _show(prog, args)
    return lambda: _show_instead_of_usage_error(prog)


def _show(prog: str, args: list[str]) -> int:
    """``ninja --help``: as click's help option and ninja's main answer it."""
    try:
        sys.stdout.write(render(prog) + "\n")
        sys.stdout.flush()
    except KeyboardInterrupt:  # click: a blank line closing the ^C, then Abort
        sys.stderr.write("\n")
        sys.stderr.flush()
        sys.stderr.write(f"{prog}: aborted\n")
        sys.stderr.flush()
        raise SystemExit(130) from None
    except OSError as exc:
        import errno

        if exc.errno == errno.EPIPE:  # `ninja --help | head -1`: no failure
            quiet_stdout()
            return 0
        from shinobi.cli.main import report_failure
        from shinobi.cli.standard_output import unwritable

        report_failure(unwritable(exc), args, prog)  # the help is all it had to print
    return 0


def _show_instead_of_usage_error(prog: str) -> int:
    """Bare ``ninja``: click calls it a usage error, ninja shows the help on stderr
    and exits 2, whatever stderr refuses (as :func:`shinobi.cli.main.main` does)."""
    from shinobi.cli.standard_output import quiet_failing_stderr

    quiet_failing_stderr()
    sys.stderr.write(render(prog) + "\n")
    sys.stderr.flush()
    raise SystemExit(2)


def render(prog: str, width: int | None = None) -> str:
    """The top-level help, laid out as click's ``HelpFormatter`` lays it out for
    the group in :mod:`shinobi.cli.main` (``Command.get_help``), at ``width`` or
    the width click would take from the terminal."""
    if width is None:
        import shutil

        columns = shutil.get_terminal_size().columns
        width = max(min(columns, MAX_CONTENT_WIDTH) - 2, 50)
    prefix = f"Usage: {prog} "
    out = [_wrap(width, prefix, " " * len(prefix)).fill("[OPTIONS] COMMAND [ARGS]...")]
    out.append("\n\n" + _paragraphs(HELP, width, "  ") + "\n")
    options = [
        ("--version", "Show the version and exit."),
        ("--debug", DEBUG_HELP),
        (", ".join(HELP_OPTION_NAMES), "Show this message and exit."),
    ]
    out.append("\nOptions:\n" + _definitions(options, width))
    commands = [(name, help_text) for name, (_m, _a, help_text) in COMMANDS.items()]
    out.append("\nCommands:\n" + _definitions(commands, width))
    return "".join(out).rstrip("\n")


#: The words click puts in the help through gettext, which a message catalog
#: could translate (click looks them up in the default domain).
_CLICK_WORDS = ("Usage:", "Options", "Show the version and exit.", "Show this message and exit.")


def _untranslated() -> bool:
    """Whether click would show its own words in English, as :func:`render` does."""
    from gettext import gettext

    return all(gettext(word) == word for word in _CLICK_WORDS)


def _wrap(width: int, initial_indent: str = "", subsequent_indent: str = "") -> TextWrapper:
    """click's ``TextWrapper``: the standard one, but a word longer than a line is
    cut where the line ends, never at a hyphen of its own."""
    import textwrap

    class ClickWrapper(textwrap.TextWrapper):
        def _handle_long_word(
            self, reversed_chunks: list[str], cur_line: list[str], cur_len: int, width: int
        ) -> None:
            space_left = max(width - cur_len, 1)
            if self.break_long_words:
                last = reversed_chunks[-1]
                cur_line.append(last[:space_left])
                reversed_chunks[-1] = last[space_left:]
            elif not cur_line:
                cur_line.append(reversed_chunks.pop())

    return ClickWrapper(
        width,
        initial_indent=initial_indent,
        subsequent_indent=subsequent_indent,
        replace_whitespace=False,
    )


def _paragraphs(text: str, width: int, indent: str = "") -> str:
    """click's ``wrap_text(preserve_paragraphs=True)``: each paragraph filled, keeping
    its own indent; one after a ``\\b`` line kept as written, only indented."""
    paragraphs: list[tuple[int, bool, str]] = []
    lines: list[str] = []
    first_indent = 0
    for line in [*text.expandtabs().splitlines(), ""]:
        if line:
            if not lines:
                first_indent = len(line) - len(line.lstrip())
                line = line.lstrip()
            lines.append(line)
        elif lines:
            raw = lines[0].strip() == "\b"
            body = "\n".join(lines[1:]) if raw else " ".join(lines)
            paragraphs.append((first_indent, raw, body))
            lines = []
    filled = []
    for extra, raw, body in paragraphs:
        inner = indent + " " * extra
        if raw:
            filled.append("\n".join(inner + line for line in body.splitlines()))
        else:
            filled.append(_wrap(width, inner, inner).fill(body))
    return "\n\n".join(filled)


def _definitions(rows: Iterable[tuple[str, str]], width: int) -> str:
    """click's ``HelpFormatter.write_dl`` at one level of indent: terms in a column
    (up to 30 wide), each description wrapped beside its term."""
    rows = list(rows)
    indent = 2
    first_col = min(max(len(term) for term, _ in rows), 30) + 2
    text_width = max(width - first_col - 2, 10)
    out = []
    for term, description in rows:
        out.append(" " * indent + term)
        if not description:
            out.append("\n")
            continue
        if len(term) <= first_col - 2:
            out.append(" " * (first_col - len(term)))
        else:
            out.append("\n" + " " * (first_col + indent))
        lines = _paragraphs(description, text_width).splitlines()
        if not lines:
            out.append("\n")
            continue
        out.append(lines[0] + "\n")
        out.extend(" " * (first_col + indent) + line + "\n" for line in lines[1:])
    return "".join(out)
