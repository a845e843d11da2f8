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
    return None if shared is None else f"step {name!r}: {shared.note()}"
