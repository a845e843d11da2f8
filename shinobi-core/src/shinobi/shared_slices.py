"""Scatter slices that would rewrite the same path at once.

``ninja compile`` runs the slices of a scatter one at a time when more than
one of them uses a path that one rewrites (see :mod:`shinobi.offload.ordering`);
a local run with more than one worker must be no less careful. Two slices
that produce the very same output are worse than a race: run one after the
other, the second still replaces the first's product, so that case is named.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

__all__ = ["slices_sharing"]


def slices_sharing(
    node: Any, name: str, parts: Sequence[Mapping[str, Any]], cwd: str
) -> str | None:
    """Why the slices of step ``name`` (one set of inputs per slice) must run one
    at a time, as a warning; None when they may overlap. Each slice's paths are
    planned as the dry run plans them: a cab's own, or those of every step of a
    nested recipe (a pystep's are its own business, and plan as none)."""
    from shinobi.offload.ordering import shared_rewritten
    from shinobi.plan import plan_step

    planned = [
        plan_step(f"{name}[{k}]", node, dict(part), cwd, check=False)
        for k, part in enumerate(parts)
    ]
    shared = shared_rewritten([[u for s in _every_step([p]) for u in s.paths] for p in planned])
    return None if shared is None else f"step {name!r}: {shared.note()}"


def _every_step(steps: Iterable[Any]) -> Iterator[Any]:
    """Each planned step, its slices and the steps of its nested recipe, depth first."""
    for step in steps:
        yield step
        yield from _every_step(step.slices or ())
        if step.children is not None:
            yield from _every_step(step.children.steps)
