"""Scatter slices that would rewrite the same path at once.

``ninja compile`` runs the slices of a scatter one at a time when more than
one of them uses a path that one rewrites (see :mod:`shinobi.offload.ordering`);
a local run with more than one worker must be no less careful. Two slices
that produce the very same output are worse than a race: run one after the
other, the second still replaces the first's product, so that case is named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shinobi.backends.base import PathUse

__all__ = ["slices_sharing"]


def slices_sharing(cab: Any, name: str, parts: Sequence[Mapping[str, Any]], cwd: str) -> str | None:
    """Why the slices of step ``name`` (one set of inputs per slice) must run one
    at a time, as a warning; None when they may overlap."""
    from shinobi.offload.ordering import shared_rewritten
    from shinobi.steps.argv import path_uses
    from shinobi.steps.outputs import static_outputs

    uses = [
        path_uses(cab, part, static_outputs(cab, f"{name}[{k}]", part), cwd)
        for k, part in enumerate(parts)
    ]
    shared = shared_rewritten(uses)
    if shared is None:
        return None
    clash = _same_product(uses)
    if clash is not None:
        path, first, second = clash
        return (
            f"step {name!r}: slices [{first}] and [{second}] both write {path}, so one"
            " replaces the other's product; give each slice its own output path (scatter"
            " a prefix, or name the output after the scattered input). Its slices run one"
            " at a time"
        )
    return (
        f"step {name!r}: its slices run one at a time: more than one uses {shared},"
        " which one rewrites"
    )


def _same_product(uses: Sequence[Sequence[PathUse]]) -> tuple[str, int, int] | None:
    """The first output path two slices both produce (not rewrite in place)."""
    seen: dict[str, int] = {}
    for index, slice_uses in enumerate(uses):
        for use in slice_uses:
            if use.role != "output" or use.mutable or use.pattern:
                continue
            first = seen.setdefault(use.path, index)
            if first != index:
                return use.path, first, index
    return None
