"""What a path that is no regular file is, in words: for refusals that name it."""

from __future__ import annotations

import stat

__all__ = ["kind_of"]


def kind_of(mode: int) -> str:
    """``a named pipe (FIFO)``, ``a device``, ``a socket``: what a non-file path is."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
