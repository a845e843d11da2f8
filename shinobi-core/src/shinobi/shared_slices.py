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

from shinobi.backends.base import PathUse

__all__ = ["slices_sharing"]


def slices_sharing(
    node: Any, name: str, parts: Sequence[Mapping[str, Any]], cwd: str
) -> str | None:
    """Why the slices of step ``name`` (one set of inputs per slice) must run one
    at a time, as a warning; None when they may overlap (or it cannot be told:
    a pystep's paths are its own business)."""
    from shinobi.offload.ordering import shared_rewritten

    uses = [_uses(node, f"{name}[{k}]", part, cwd) for k, part in enumerate(parts)]
    if any(u is None for u in uses):
        return None
    shared = shared_rewritten([u for u in uses if u is not None])
    return None if shared is None else f"step {name!r}: {shared.note()}"


def _uses(node: Any, name: str, values: Mapping[str, Any], cwd: str) -> list[PathUse] | None:
    """Every path one slice reads or writes, as far as it is known before it runs:
    a cab's own, or those of every step of a nested recipe."""
    from shinobi.plan import cab_of, plan_graph
    from shinobi.steps.argv import path_uses
    from shinobi.steps.outputs import static_outputs

    cab = cab_of(node.step)
    if cab is not None:
        return list(path_uses(cab, values, static_outputs(cab, name, values), cwd))
    if node.kind != "recipe" or node.subgraph is None:
        return None
    plan = plan_graph(node.subgraph, dict(values), cwd, f"{name}.", check=False)
    return [use for step in _every_step(plan.steps) for use in step.paths]


def _every_step(steps: Iterable[Any]) -> Iterator[Any]:
    """Each planned step, its slices and the steps of its nested recipe, depth first."""
    for step in steps:
        yield step
        yield from _every_step(step.slices or ())
        if step.children is not None:
            yield from _every_step(step.children.steps)
