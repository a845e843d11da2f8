"""The dry run's fast paths draw what the general ones do.

A box of plain ASCII lines is measured by length and padded with ``ljust``;
rows take declaration order when every step waits only on earlier ones; the
step count is taken without the dotted paths of ``graph.walk()``. Each must
give what the general path gives, or the drawing changes with the recipe.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.graph import build_graph
from shinobi.render.dryrun import MAX_WIDTH, WIDTH, _box
from shinobi.render.rows import wavefront_rows
from shinobi.render.terminal_text import columns
from shinobi.steps import Cab, OutputRef, ParamMeta, Recipe, StepRef


class _In(BaseModel):
    after: Path | None = None
    out: Path


class _Out(BaseModel):
    out: Path | None = None


_TOUCH = Cab(
    name="touch",
    command="/bin/touch",
    inputs_model=_In,
    outputs_model=_Out,
    field_meta={"after": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
)


def _step(name: str, *after: str) -> StepRef:
    wiring: dict[str, object] = {"out": Path(name)}
    if after:
        wiring["after"] = [OutputRef(step=a, field="out") for a in after]
    return StepRef(name=name, step=_TOUCH, wiring=wiring)


def _rows(recipe: Recipe) -> list[tuple[int, list[str]]]:
    graph = build_graph(recipe)
    return [(r.depth, [graph.nodes[i].name for i in r.members]) for r in wavefront_rows(graph)]


def test_a_step_waiting_on_one_declared_after_it_is_drawn_after_it() -> None:
    recipe = Recipe(name="fwd", steps=[_step("late", "early"), _step("early"), _step("free")])
    assert _rows(recipe) == [(0, ["early", "free"]), (1, ["late"])]


def test_rows_go_by_depth_then_by_first_member() -> None:
    recipe = Recipe(
        name="mixed",
        steps=[_step("a"), _step("b", "a"), _step("c"), _step("d", "a"), _step("e", "b", "c")],
    )
    assert _rows(recipe) == [(0, ["a", "c"]), (1, ["b", "d"]), (2, ["e"])]


def test_the_step_count_counts_nested_recipes_and_their_steps() -> None:
    inner = Recipe(name="inner", steps=[_step("x"), _step("y", "x")])
    outer = Recipe(name="outer", steps=[_step("a"), StepRef(name="sub", step=inner, wiring={})])
    graph = build_graph(outer)
    walked = [(path, node) for path, node in graph.walk()]
    every = [(prefix + node.name, node) for prefix, node in graph.every_node()]
    assert every == walked
    assert sum(1 for _ in graph.every_node()) == len(walked) == 4


def _right_edges(box: list[str]) -> set[int]:
    return {columns(line) for line in box}


def test_a_plain_box_and_a_wide_one_line_up_alike() -> None:
    lines = ["$ /bin/touch a b", "reads a", "writes b"]
    plain = _box("step", "cab · native", lines, "  ")
    assert len(_right_edges(plain)) == 1
    assert plain[1] == "  │ $ /bin/touch a b" + " " * (WIDTH - 2 - 4 - 16) + " │"
    wide = _box("東京", "cab · native", [*lines, "reads 東京"], "  ")
    assert len(_right_edges(wide)) == 1  # a wide character takes two columns
    assert wide[1:4] == plain[1:4]


def test_a_line_too_long_for_any_box_runs_on_past_it_whatever_its_characters() -> None:
    long = "$ " + "x" * MAX_WIDTH
    for title in ("plain", "tab\there"):
        box = _box(title, "cab · native", [long, "reads a"], "")
        assert box[1] == "│ " + long  # left open, widening no box
        assert columns(box[0]) == columns(box[2]) == columns(box[3])
    assert _box("tab\there", "t", ["a"], "")[0].startswith("┌─ tab\\there ")


def _heap_order(recipe: Recipe) -> list[int]:
    """The order by Kahn's algorithm with the smallest ready index first, worked out
    here without the graph's shortcut."""
    nodes = build_graph(recipe).nodes
    done: list[int] = []
    while len(done) < len(nodes):
        done.append(
            min(i for i, n in enumerate(nodes) if i not in done and set(n.deps) <= set(done))
        )
    return done


def test_the_topological_order_is_the_heap_s_with_waits_either_way() -> None:
    backward = Recipe(name="b", steps=[_step("a"), _step("b", "a"), _step("c", "a", "b")])
    forward = Recipe(name="f", steps=[_step("late", "early"), _step("early"), _step("free")])
    for recipe in (backward, forward):
        assert build_graph(recipe).topological_order() == _heap_order(recipe)
    assert build_graph(forward).topological_order() == [1, 0, 2]
