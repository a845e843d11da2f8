"""Text a tool wrote, made safe to echo on the user's terminal.

ninja echoes what a failed step printed last, and what a tool's own output
said (wrangled errors and warnings). A tool's output may hold terminal
control sequences: set the window title (OSC), clear the screen, move the
cursor, or worse on some terminals. Echoed verbatim they act on the user's
terminal instead of being read. Colours (SGR: ``ESC [ ... m``) are kept, as
tools use them to mark errors; every other escape sequence and control
character but the tab is removed. The step's log files keep the bytes as
written.
"""

from __future__ import annotations

import re

__all__ = ["columns", "for_terminal", "padded"]

_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: kept only when it sets colours (final "m")
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (a title, a hyperlink, a clipboard write)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?"  # any other escape
    r"|[\x00-\x08\x0a-\x1f\x7f-\x9f]"  # C0 (but tab), DEL, C1
)


def _kept(match: re.Match[str]) -> str:
    text = match.group()
    return text if text.startswith("\x1b[") and text.endswith("m") else ""


def for_terminal(text: str) -> str:
    """``text`` (one line) without what would act on a terminal, colours kept."""
    if text.isprintable():  # nearly every line: no work
        return text
    return _SEQUENCE.sub(_kept, text)


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
    import unicodedata

    return len(text) + sum(
        -1 if unicodedata.combining(c) else 1 if unicodedata.east_asian_width(c) in "WF" else 0
        for c in odd
    )


def padded(text: str, width: int) -> str:
    """``text`` with spaces after it to fill ``width`` columns (see :func:`columns`)."""
    return text + " " * (width - columns(text))
