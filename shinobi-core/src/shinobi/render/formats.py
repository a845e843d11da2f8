"""``ninja graph --format text|dot|mermaid|json``: the declared graph for other tools."""

from __future__ import annotations

import json
from typing import Any

from shinobi.graph import Graph, Node
from shinobi.render.rows import wavefront_rows
from shinobi.wording import counted

__all__ = ["FORMATS", "graph_to_data", "node_facts", "render_graph"]


def graph_to_data(graph: Graph) -> dict[str, Any]:
    """A JSON-ready description: nodes in declaration order and their edges."""
    nodes = []
    for node in graph.nodes:
        entry: dict[str, Any] = {
            "name": node.name,
            "kind": node.kind,
            "depends_on": [graph.nodes[d].name for d in node.deps],
        }
        entry.update(node_facts(node))
        if node.backend:
            entry["backend"] = node.backend
        if node.subgraph is not None:
            entry["recipe"] = graph_to_data(node.subgraph)
        nodes.append(entry)
    return {"recipe": graph.recipe.name, "nodes": nodes}


def node_facts(node: Node) -> dict[str, Any]:
    """What a node declares beyond its name and edges, for JSON: the inputs it is
    scattered over, its footprint, its loop and iteration. The dry run's plan
    says the same through this one function."""
    facts: dict[str, Any] = {}
    if node.scatter:
        facts["scatter"] = list(node.scatter)
    if node.resources is not None and node.resources.declared:
        facts["resources"] = node.resources.to_json()
    if node.loop is not None:
        facts["loop"] = {"name": node.loop, "iteration": node.iteration}
    return facts


def _quote(name: str) -> str:
    """A DOT string: quotes and backslashes escaped, every other character as it is.

    DOT has no ``\\uXXXX`` escape, so JSON's ASCII-only form would draw
    ``étalonnage`` as ``\\u00e9talonnage``.
    """
    return json.dumps(name, ensure_ascii=False)


def _marked(node: Node) -> str:
    """A node's name, with the inputs it is scattered over (the graph shows one node)."""
    return f"{node.name} [scatter {', '.join(node.scatter)}]" if node.scatter else node.name


def _dot(graph: Graph) -> str:
    lines = [f"digraph {_quote(graph.recipe.name)} {{", "  rankdir=TB;", "  node [shape=box];"]
    for node in graph.nodes:
        # a real line break: json.dumps writes it as \n, which dot reads as one
        label = node.name + (f"\n[scatter {', '.join(node.scatter)}]" if node.scatter else "")
        lines.append(f"  {_quote(node.name)} [label={_quote(label)}];")
    for node in graph.nodes:
        for dep in node.deps:
            lines.append(f"  {_quote(graph.nodes[dep].name)} -> {_quote(node.name)};")
    lines.append("}")
    return "\n".join(lines)


def _mermaid(graph: Graph) -> str:
    lines = ["flowchart TD"]
    ids = {node.name: f"n{node.index}" for node in graph.nodes}
    for node in graph.nodes:
        lines.append(f'  {ids[node.name]}["{_mermaid_text(_marked(node))}"]')
    for node in graph.nodes:
        for dep in node.deps:
            lines.append(f"  {ids[graph.nodes[dep].name]} --> {ids[node.name]}")
    return "\n".join(lines)


#: Mermaid's entity codes for what its label syntax or its HTML labels would
#: read as markup: ``#`` first, since every code starts with it.
_MERMAID_CODES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;"}


def _mermaid_text(name: str) -> str:
    """``name`` as a Mermaid label shows it: ``hello <b>`` stays text, ``#35;`` too."""
    return "".join(_MERMAID_CODES.get(char, char) for char in name)


def _text(graph: Graph) -> str:
    lines = [f"recipe {graph.recipe.name}: {counted(len(graph.nodes), 'step')}"]
    for number, row in enumerate(wavefront_rows(graph), 1):
        after = ", ".join(graph.nodes[i].name for i in row.after) or "start"
        names = ", ".join(_marked(graph.nodes[i]) for i in row.members)
        lines.append(f"  {number:>3}. after {after}: {names}")
    return "\n".join(lines)


FORMATS = {
    "text": _text,
    "dot": _dot,
    "mermaid": _mermaid,
    "json": lambda graph: json.dumps(graph_to_data(graph), indent=2),
}


def render_graph(graph: Graph, fmt: str) -> str:
    return FORMATS[fmt](graph)
