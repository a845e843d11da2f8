"""Scripts saved with Windows line ends: their ``#!`` line names ``/bin/sh\\r``.

The kernel (or ``/usr/bin/env``) then looks for an interpreter whose name ends
in a carriage return and finds none. Every runtime reports that as "no such
file", which reads as a missing interpreter; the fix is converting the file,
so each backend that sees the failure says so in the same words.
"""

from __future__ import annotations

import shlex

__all__ = ["crlf_advice", "crlf_shebang"]


def crlf_shebang(script: str) -> bool:
    """Whether ``script`` starts with a ``#!`` line that ends in a carriage return."""
    try:
        with open(script, "rb") as fh:
            head = fh.readline(512)
    except OSError:
        return False
    return head.startswith(b"#!") and head.rstrip(b"\n").endswith(b"\r")


def crlf_advice(path: str) -> str:
    """What is wrong with ``path`` and the commands that convert it."""
    quoted = shlex.quote(path)
    return (
        f"{path} has Windows (CRLF) line endings, so its #! line names an interpreter"
        f" ending in a carriage return; convert it (`dos2unix {quoted}`, or"
        f" `sed -i 's/\\r$//' {quoted}`)"
    )
