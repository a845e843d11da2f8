"""Wavefront rows: the shape both the dry-run boxes and the text graph show.

Steps at the same depth that wait on exactly the same steps form one row (a
fan-out); a step fed by several others is a fan-in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

from shinobi.graph import Graph

__all__ = ["Row", "wavefront_rows"]


@dataclass(slots=True)
class Row:
    depth: int
    after: tuple[int, ...]
    members: list[int]


def wavefront_rows(graph: Graph, turns: Mapping[int, set[int]] | None = None) -> list[Row]:
    """The rows of ``graph``; ``turns`` (see :mod:`shinobi.step_turns`) are waits
    besides the wiring, which the rows keep as they keep a dependency."""
    after = [node.deps for node in graph.nodes]
    if turns:
        for index, waits in turns.items():
            after[index] = tuple(sorted({*after[index], *waits}))
    depth = [0] * len(graph.nodes)
    for i in _dependencies_first(graph, after):
        deps = after[i]
        if len(deps) == 1:  # most steps wait on one: no list, no max()
            depth[i] = 1 + depth[deps[0]]
        elif deps:  # a list, not a generator, for max(): one frame fewer per step
            depth[i] = 1 + max([depth[d] for d in deps])
    # A row is the steps that wait on the same steps: their depth is the same too.
    rows: dict[tuple[int, ...], Row] = {}
    for index, deps in enumerate(after):
        row = rows.get(deps)
        if row is None:
            row = rows[deps] = Row(depth[index], deps, [])
        row.members.append(index)
    # by depth, then by first member: the rows, made in index order, sorted (stably)
    # by depth alone, rather than every step sorted by its depth first
    return sorted(rows.values(), key=attrgetter("depth"))


def _dependencies_first(graph: Graph, after: list[tuple[int, ...]]) -> Sequence[int]:
    """Node indices, each after every one in its ``after`` (sorted tuples), for depths.

    Nearly always a step waits only on steps declared before it: then declaration
    order is such an order, told by one look at each step's last wait, rather
    than the graph's topological order worked out on a heap.
    """
    if all([not deps or deps[-1] < i for i, deps in enumerate(after)]):
        return range(len(after))
    return graph.topological_order()  # turns only ever wait for a step before
