"""Text a tool wrote, made safe to echo in ninja's own lines.

ninja echoes what a failed step printed last, and what a tool's own output
said (wrangled errors and warnings), in its progress lines and its final
``ninja: error:`` line. A tool's output may hold terminal control sequences:
set the window title (OSC), clear the screen, move the cursor, or worse on
some terminals. Echoed verbatim they act on the user's terminal (and garble
the live view, whose redraw counts lines) instead of being read. Every escape
sequence is removed, colours (SGR) too: a colour the tool left on would run
into ninja's next lines, ``NO_COLOR`` would not hold, and a pipe and a
terminal would show different text. A line break becomes a space (the line
is one of ninja's); other control characters but the tab are removed. The
step's log files, which ``ninja logs`` prints, keep the bytes as written, and
``--json`` and the manifest keep the text as data (JSON escapes it).
"""

from __future__ import annotations

import os
import re
from typing import IO

__all__ = ["columns", "cut", "for_terminal", "padded", "redraws"]

_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, clearing
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (a title, a hyperlink, a clipboard write)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?"  # any other escape
    r"|[\x00-\x08\x0e-\x1f\x7f-\x9f]"  # C0 (but tab and line breaks), DEL, C1
)
_BREAKS = re.compile(r"[\n\v\f\r]+")


def redraws(stream: IO[str]) -> bool:
    """Whether ``stream`` is a terminal that takes cursor moves, so a view may be
    redrawn in place on it.

    ``TERM=dumb`` (an Emacs shell buffer, some IDE consoles) is a terminal that
    says it takes none: the codes would show as text. Without ``TERM`` nothing
    says which codes it takes. Either gets plain lines, as a pipe does.
    """
    return stream.isatty() and os.environ.get("TERM", "dumb") not in ("", "dumb")


def for_terminal(text: str) -> str:
    """``text`` as one line of ninja's, without what would act on a terminal.

    The one helper for a tool's text in ninja's own lines (progress, the final
    error), so they say the same in a pipe, on a terminal and with ``NO_COLOR``.
    """
    if text.isprintable():  # nearly every line: no work
        return text
    return _BREAKS.sub(" ", _SEQUENCE.sub("", text))


#: Characters that may not take exactly one column: all but Latin (to U+02FF),
#: the dashes, quotes and ellipsis of general punctuation, arrows and the
#: box-drawing set (none of them wide or combining). Only these are looked up,
#: so a dry-run box's edges cost a regular-expression scan, not a Python loop.
_MAYBE_ODD = re.compile(r"[^\x00-\u02ff\u2010-\u2027\u2190-\u21ff\u2500-\u257f]")


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes: a wide (CJK) character two, a
    combining mark none; what lines up a table or a box whatever the names."""
    if text.isascii():  # nearly every line: its length
        return len(text)
    odd = _MAYBE_ODD.findall(text)
    if not odd:
        return len(text)
    return len(text) + sum(_extra(c) for c in odd)


def _extra(char: str) -> int:
    """Columns ``char`` takes beyond one: 1 for a wide (CJK) one, -1 for a combining mark."""
    import unicodedata

    if unicodedata.combining(char):
        return -1
    return 1 if unicodedata.east_asian_width(char) in "WF" else 0


def padded(text: str, width: int) -> str:
    """``text`` with spaces after it to fill ``width`` columns (see :func:`columns`)."""
    return text + " " * (width - columns(text))


def cut(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` columns (see :func:`columns`), so it takes
    one row: a line cut by its characters still wraps when some are wide, and a
    redraw that counts rows then leaves stale lines behind."""
    if text.isascii():  # nearly every line: a slice
        return text[:width]
    if columns(text) <= width:
        return text
    used = 0
    for end, char in enumerate(text):
        step = 1 + _extra(char) if _MAYBE_ODD.match(char) else 1
        if used + step > width:
            return text[:end]
        used += step
    return text
