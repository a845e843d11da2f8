"""``ninja graph``'s text, dot and mermaid draw the steps of nested recipes, not one box."""

from __future__ import annotations

import json

from pydantic import BaseModel

from shinobi.graph import build_graph
from shinobi.render.formats import render_graph
from shinobi.steps import Cab, File, ParamMeta, Recipe


class ToolIn(BaseModel):
    name: str
    src: File | None = None


class Made(BaseModel):
    out: File


class Source(BaseModel):
    src: File


TOOL = Cab(
    "tool",
    ["/bin/echo"],
    ToolIn,
    Made,
    {
        "name": ParamMeta(positional=True),
        "src": ParamMeta(positional=True),
        "out": ParamMeta(implicit="{name}.txt"),
    },
)


def _pipeline() -> Recipe:
    """prep -> cal (a -> b, with c beside a; inner is nested in cal) -> image."""
    inner = Recipe("inner", Source, Made)
    inner.add_step("deep", TOOL, name="deep", src=inner.inputs.src)
    inner.set_output("out", inner.outputs.deep.out)
    cal = Recipe("calibrate", Source, Made)
    cal.add_step("a", TOOL, name="a", src=cal.inputs.src)
    cal.add_step("b", TOOL, name="b", src=cal.outputs.a.out)
    cal.add_step("c", inner, src=cal.inputs.src)
    cal.set_output("out", cal.outputs.b.out)
    outer = Recipe("outer")
    outer.add_step("prep", TOOL, name="prep")
    outer.add_step("cal", cal, src=outer.outputs.prep.out)
    outer.add_step("image", TOOL, name="image", src=outer.outputs.cal.out)
    return outer


def test_dot_draws_a_nested_recipe_as_a_cluster_joined_at_its_first_and_last_steps() -> None:
    dot = render_graph(build_graph(_pipeline()), "dot")
    assert 'subgraph "cluster_cal" {' in dot
    assert 'label="cal (recipe calibrate)";' in dot
    assert 'subgraph "cluster_cal.c" {' in dot
    assert '"cal.c.deep" [label="deep"];' in dot
    assert '"cal.a" -> "cal.b";' in dot
    # into the recipe: its steps that wait on nothing inside it (a, and deep within c)
    assert '"prep" -> "cal.a";' in dot and '"prep" -> "cal.c.deep";' in dot
    # out of it: its steps nothing inside it waits on (b, and deep)
    assert '"cal.b" -> "image";' in dot and '"cal.c.deep" -> "image";' in dot
    assert '"cal.a" -> "image"' not in dot and '"cal"' not in dot
    assert dot.count("{") == dot.count("}")


def test_mermaid_draws_a_nested_recipe_as_a_subgraph_edges_join_as_a_whole() -> None:
    lines = render_graph(build_graph(_pipeline()), "mermaid").splitlines()
    assert '  subgraph n1["cal (recipe calibrate)"]' in lines
    assert '    n1_0["a"]' in lines and "    n1_0 --> n1_1" in lines
    assert '    subgraph n1_2["c (recipe inner)"]' in lines
    assert '      n1_2_0["deep"]' in lines
    assert "  n0 --> n1" in lines and "  n1 --> n2" in lines
    assert sum(line.strip() == "end" for line in lines) == 2


def test_text_lists_a_nested_recipes_rows_under_its_own() -> None:
    text = render_graph(build_graph(_pipeline()), "text")
    assert text.splitlines() == [
        "recipe outer: 3 steps; 5 with nested recipes expanded",
        "    1. after start: prep",
        "    2. after prep: cal",
        "       cal (recipe calibrate): 3 steps",
        "         1. after start: a, c",
        "            c (recipe inner): 1 step",
        "              1. after start: deep",
        "         2. after a: b",
        "    3. after cal: image",
    ]


def test_a_recipe_without_nesting_is_drawn_as_before() -> None:
    flat = Recipe("flat")
    flat.add_step("make", TOOL, name="make")
    flat.add_step("use", TOOL, name="use", src=flat.outputs.make.out)
    graph = build_graph(flat)
    assert render_graph(graph, "text").splitlines()[0] == "recipe flat: 2 steps"
    assert '"make" -> "use";' in render_graph(graph, "dot")
    assert "n0 --> n1" in render_graph(graph, "mermaid")
    assert json.loads(render_graph(graph, "json"))["nodes"][1]["depends_on"] == ["make"]


def test_an_empty_nested_recipe_is_a_box_its_edges_go_through() -> None:
    """Its cluster drew nothing and took both edges with it."""
    outer = Recipe("outer")
    outer.add_step("prep", TOOL, name="prep")
    outer.add_step("flag", Recipe("placeholder"))
    outer.add_step("image", TOOL, name="image")
    graph = build_graph(outer)
    graph.nodes[1].deps, graph.nodes[2].deps = (0,), (1,)  # the order, as wiring would give it
    dot = render_graph(graph, "dot")
    assert '"flag" [label="flag (recipe placeholder): no steps"];' in dot
    assert '"prep" -> "flag";' in dot and '"flag" -> "image";' in dot


def test_a_scattered_nested_recipe_keeps_its_scatter_mark() -> None:
    class Many(BaseModel):
        src: list[File]

    outer = Recipe("outer", Many)
    outer.add_step("cal", _pipeline().steps[1].step, scatter=["src"], src=outer.inputs.src)
    graph = build_graph(outer)
    assert 'label="cal (recipe calibrate) [scatter src]";' in render_graph(graph, "dot")
    assert 'subgraph n0["cal (recipe calibrate) [scatter src]"]' in render_graph(graph, "mermaid")
