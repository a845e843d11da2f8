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


def _marked(node: Node, name: str | None = None) -> str:
    """A node's name (or ``name``), with the inputs it is scattered over (the graph shows
    one node)."""
    name = node.name if name is None else name
    return f"{name} [scatter {', '.join(node.scatter)}]" if node.scatter else name


def _entries(node: Node, path: str) -> list[str]:
    """The drawn nodes an edge into ``node`` reaches: ``node`` itself, or for a nested
    recipe the steps of it that wait on nothing inside it (its first row)."""
    cluster = _cluster_of(node)
    if cluster is None:
        return [path]
    return [e for n in cluster.nodes if not n.deps for e in _entries(n, f"{path}.{n.name}")]


def _exits(node: Node, path: str) -> list[str]:
    """The drawn nodes an edge out of ``node`` leaves from: ``node``, or the steps of a
    nested recipe that nothing inside it waits on (its last steps)."""
    cluster = _cluster_of(node)
    if cluster is None:
        return [path]
    return [
        e
        for n in cluster.nodes
        if not cluster.dependants[n.index]
        for e in _exits(n, f"{path}.{n.name}")
    ]


def _dot(graph: Graph) -> str:
    """Graphviz: a nested recipe is a cluster of its own steps, named by their dotted
    paths; an edge into or out of it goes to its first steps or from its last ones."""
    lines = [f"digraph {_quote(graph.recipe.name)} {{", "  rankdir=TB;", "  node [shape=box];"]
    lines += _dot_body(graph, "", "  ")
    lines.append("}")
    return "\n".join(lines)


def _dot_body(graph: Graph, prefix: str, indent: str) -> list[str]:
    lines = []
    for node in graph.nodes:
        path = prefix + node.name
        scatter = f"[scatter {', '.join(node.scatter)}]" if node.scatter else ""
        cluster = _cluster_of(node)
        if cluster is not None:
            title = " ".join(filter(None, [_recipe_label(node, cluster), scatter]))
            lines.append(f"{indent}subgraph {_quote('cluster_' + path)} {{")
            lines.append(f"{indent}  label={_quote(title)};")
            lines += _dot_body(cluster, f"{path}.", indent + "  ")
            lines.append(f"{indent}}}")
            continue
        name = node.name
        if node.subgraph is not None:  # a recipe of no steps
            name = f"{_recipe_label(node, node.subgraph)}: no steps"
        # a real line break: json.dumps writes it as \n, which dot reads as one
        label = name + (f"\n{scatter}" if scatter else "")
        lines.append(f"{indent}{_quote(path)} [label={_quote(label)}];")
    for node in graph.nodes:
        for dep in node.deps:
            upstream = graph.nodes[dep]
            for tail in _exits(upstream, prefix + upstream.name):
                for head in _entries(node, prefix + node.name):
                    lines.append(f"{indent}{_quote(tail)} -> {_quote(head)};")
    return lines


def _cluster_of(node: Node) -> Graph | None:
    """The graph of a nested recipe drawn as a cluster of its steps; None for a step, and
    for a recipe of no steps (drawn as a box, or the edges through it would go)."""
    return node.subgraph if node.subgraph is not None and node.subgraph.nodes else None


def _recipe_label(node: Node, inner: Graph) -> str:
    """How a nested recipe is titled: its step name, and the recipe's where they differ."""
    name = inner.recipe.name
    return node.name if name == node.name else f"{node.name} (recipe {name})"


def _mermaid(graph: Graph) -> str:
    """Mermaid: a nested recipe is a subgraph, which an edge may join as a whole."""
    return "\n".join(["flowchart TD", *_mermaid_body(graph, "n", "  ")])


def _mermaid_body(graph: Graph, prefix: str, indent: str) -> list[str]:
    lines = []
    ids = [f"{prefix}{node.index}" for node in graph.nodes]
    for node in graph.nodes:
        if node.subgraph is not None:
            title = _mermaid_text(_marked(node, _recipe_label(node, node.subgraph)))
            lines.append(f'{indent}subgraph {ids[node.index]}["{title}"]')
            lines += _mermaid_body(node.subgraph, f"{ids[node.index]}_", indent + "  ")
            lines.append(f"{indent}end")
        else:
            lines.append(f'{indent}{ids[node.index]}["{_mermaid_text(_marked(node))}"]')
    for node in graph.nodes:
        for dep in node.deps:
            lines.append(f"{indent}{ids[dep]} --> {ids[node.index]}")
    return lines


#: Mermaid's entity codes for what its label syntax or its HTML labels would
#: read as markup: ``#`` first, since every code starts with it.
_MERMAID_CODES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;"}


def _mermaid_text(name: str) -> str:
    """``name`` as a Mermaid label shows it: ``hello <b>`` stays text, ``#35;`` too."""
    return "".join(_MERMAID_CODES.get(char, char) for char in name)


def _text(graph: Graph) -> str:
    total = graph.working_steps()
    shown = len(graph.nodes)
    heading = f"recipe {graph.recipe.name}: {counted(shown, 'step')}"
    if total != shown:
        heading += f"; {total} with nested recipes expanded"
    return "\n".join([heading, *_text_rows(graph, "  ")])


def _text_rows(graph: Graph, indent: str) -> list[str]:
    """The rows of ``graph``; each nested recipe's own rows follow its row, indented."""
    lines = []
    for number, row in enumerate(wavefront_rows(graph), 1):
        after = ", ".join(graph.nodes[i].name for i in row.after) or "start"
        names = ", ".join(_marked(graph.nodes[i]) for i in row.members)
        lines.append(f"{indent}{number:>3}. after {after}: {names}")
        for i in row.members:
            node = graph.nodes[i]
            if node.subgraph is not None:
                inner = node.subgraph
                title = f"{_recipe_label(node, inner)}: {counted(len(inner.nodes), 'step')}"
                lines.append(f"{indent}     {title}")
                lines += _text_rows(inner, indent + "     ")
    return lines


FORMATS = {
    "text": _text,
    "dot": _dot,
    "mermaid": _mermaid,
    "json": lambda graph: json.dumps(graph_to_data(graph), indent=2),
}


def render_graph(graph: Graph, fmt: str) -> str:
    return FORMATS[fmt](graph)
