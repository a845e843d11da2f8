"""Outputs a step did not rewrite: an earlier run's product, taken for this run's.

A tool that fails quietly (exits 0, writes nothing: a licence server down, a
flag it ignored) leaves the previous run's output where it was, and the
next step, the step cache and the provenance record would all take it for
this run's product. A regular file a step is to write that exists before the
step runs is therefore noted (inode, size, mtime, ctime), and if it is the
same file, unchanged, after the step exited 0, the step is warned about and
its result is not cached.

Only a file whose timestamps are clearly older than the step's start counts:
timestamps tick coarsely (a few milliseconds), and a file written that close
to the start cannot be told from one the step wrote. Directories are not
checked (a tool rewriting files inside one leaves its own timestamps alone),
nor paths the step rewrites in place, nor steps that run elsewhere, whose
files this host may see through an attribute cache.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from shinobi.backends.base import PathUse

__all__ = ["existing_outputs", "untouched"]

#: Seconds by which an unchanged file must predate the step to count as untouched.
_TICK = 0.05

Signature = tuple[int, int, int, int]


def _signature(st: os.stat_result) -> Signature:
    """What tells one state of a file from another: inode, size, mtime, ctime."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def existing_outputs(paths: Iterable[PathUse]) -> dict[str, Signature]:
    """The regular files among a step's outputs that exist now, with their signatures."""
    found: dict[str, Signature] = {}
    for use in paths:
        if use.role != "output" or use.mutable or use.pattern:
            continue
        try:
            st = os.stat(use.path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found[use.path] = _signature(st)
    return found


def untouched(before: dict[str, Signature], started: float) -> list[str]:
    """The files of ``before`` that are the same, unchanged, and older than ``started``."""
    limit = (started - _TICK) * 1e9
    same = []
    for path, signature in before.items():
        try:
            st = os.stat(path)
        except OSError:
            continue
        if _signature(st) == signature and max(st.st_mtime_ns, st.st_ctime_ns) < limit:
            same.append(path)
    return same
