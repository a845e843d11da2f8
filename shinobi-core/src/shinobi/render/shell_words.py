"""Command lines and labels that stay on one terminal line.

A dry run draws each step in a box, and its command line is meant to be
copied into a shell. ``shlex.join`` keeps a line break inside quotes, which
is correct for a shell but splits the box in two and leaves the reader unsure
where the value ends. Words with control characters are written in bash's
``$'...'`` form instead, so the line is both one line and pasteable.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

__all__ = ["has_control", "logs_command", "shell_join", "visible"]

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\e"}


def _escape(char: str) -> str:
    return _NAMED.get(char) or f"\\x{ord(char):02x}"


#: Every C0 control character and DEL, as the escape bash's ``$'...'`` reads back.
_CONTROLS = {code: _escape(chr(code)) for code in (*range(0x20), 0x7F)}

#: Whether a text has any of them: searched in C, where ``str.translate`` with a
#: table looks each character up in Python's dict (a dry run of 10,000 steps
#: passed some 70,000 lines through it, nearly all without one).
_HAS_CONTROL = re.compile(r"[\x00-\x1f\x7f]").search


#: What ``shlex.quote`` leaves unquoted is a word of only these characters (its own test).
_UNSAFE = re.compile(r"[^\w@%+=:,./-]", re.ASCII).search


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character :func:`visible` shows as an escape."""
    return _HAS_CONTROL(text) is not None


def visible(text: str) -> str:
    """``text`` with control characters shown as escapes (``\\n``), so it takes one line."""
    return text.translate(_CONTROLS) if _HAS_CONTROL(text) else text


def _word(word: str) -> str:
    if not _HAS_CONTROL(word):
        return shlex.quote(word)
    inner = word.replace("\\", "\\\\").replace("'", "\\'")
    return f"$'{visible(inner)}'"


def shell_join(argv: Iterable[str]) -> str:
    """``argv`` as one line a POSIX shell with ``$'...'`` (bash, zsh, ksh) reads back.

    Nearly every command line needs no quote at all (a dry run draws one per
    step): a single scan of its words run together says so, and they are
    joined as they are, rather than each word being tested twice.
    """
    words = list(map(str, argv))
    if all(words) and _UNSAFE("".join(words)) is None:  # an empty word needs ''
        return " ".join(words)
    return " ".join(_word(word) for word in words)


def logs_command(run: str, step: str | None = None, workdir: str | None = None) -> str:
    """The ``ninja logs`` command line that shows run ``run``'s logs (``step``'s),
    pasteable as printed: with ``--workdir`` when the run's records are not where
    the command would look, and ``--`` before a step named like an option
    (``-n``), which ``ninja logs`` would otherwise take for one."""
    argv = ["ninja", "logs", run]
    if workdir is not None:
        argv += ["--workdir", workdir]
    if step is not None:
        argv += ["--", step] if step.startswith("-") else [step]
    return shell_join(argv)
