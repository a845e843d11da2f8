"""Outputs an interrupted step was writing: moved aside, never left as products.

A step stopped by an interrupt may have written part of an output at its
final path. Left there, the part looks like a finished product: the next run
of a tool that appends builds on it and the step cache stores the result, a
tool that refuses to overwrite fails, a later step may read it. So an output
the interrupted step made or changed is renamed to ``NAME.interrupted``
beside it: nothing is deleted, and nothing half-written keeps a product's
name.

Only the step's own products are moved: not an input it rewrites in place
(``mutable``), not a passthrough (the path it was given to write, which is
also an input), not a harvest glob, and only on backends that run here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from shinobi.backends.base import PathUse
from shinobi.untouched_outputs import Signature, signature_of, stamped_before

__all__ = ["SUFFIX", "set_aside"]

SUFFIX = ".interrupted"


def set_aside(
    uses: Iterable[PathUse],
    inputs: Iterable[str],
    before: dict[str, Signature],
    started: float,
) -> list[tuple[str, str]]:
    """Rename the products ``uses`` names that the step wrote: changed since
    ``before`` (their signatures as it started) and stamped after ``started``.
    Returns (path, where it went) for each."""
    given = set(inputs)
    moved = []
    for use in uses:
        if use.role != "output" or use.mutable or use.pattern or use.field in given:
            continue
        now = signature_of(use.path)
        if now is None or before.get(use.path) == now or stamped_before(now, started):
            continue  # gone, too big to tell, or not written by this step: it stays
        aside = _free_name(use.path + SUFFIX)
        try:
            os.rename(use.path, aside)
        except OSError:
            continue  # left where it is; the step is reported cancelled all the same
        moved.append((use.path, aside))
    return moved


def _free_name(wanted: str) -> str:
    """``wanted``, or ``wanted-2``, ``-3``...: an earlier interruption's part is kept too."""
    candidate, number = wanted, 1
    while os.path.lexists(candidate):
        number += 1
        candidate = f"{wanted}-{number}"
    return candidate
