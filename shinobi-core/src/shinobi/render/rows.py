"""Wavefront rows: the shape both the dry-run boxes and the text graph show.

Steps at the same depth that wait on exactly the same steps form one row (a
fan-out); a step fed by several others is a fan-in.
"""

from __future__ import annotations

from dataclasses import dataclass

from shinobi.graph import Graph

__all__ = ["Row", "wavefront_rows"]


@dataclass(slots=True)
class Row:
    depth: int
    after: tuple[int, ...]
    members: list[int]


def wavefront_rows(graph: Graph) -> list[Row]:
    depth = graph.levels()
    rows: dict[tuple[int, tuple[int, ...]], Row] = {}
    for index in sorted(range(len(graph.nodes)), key=lambda i: (depth[i], i)):
        key = (depth[index], graph.nodes[index].deps)
        row = rows.get(key)
        if row is None:
            row = rows[key] = Row(depth[index], graph.nodes[index].deps, [])
        row.members.append(index)
    return list(rows.values())
