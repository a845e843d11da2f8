"""build_graph, called from a program, holds the cyclic collector off while it builds.

Without this, the collector's full passes walked the growing graph again and
again: a 100,000-step build_graph took 1.2 s instead of 0.56 s (see
shinobi.collector_paused). The program's collector is put back as it was,
even when the build fails, and nothing is frozen.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from test_graph_errors import In, ToolOut, tool

from shinobi import graph as graph_module
from shinobi.collector_paused import collector_paused
from shinobi.graph import RecipeGraphError, build_graph
from shinobi.steps import Recipe


def _pipe() -> Recipe:
    pipe = Recipe("pipe", In, ToolOut)
    pipe.add_step("make", tool, src=pipe.inputs.target)
    pipe.add_step("use", tool, src=pipe.outputs.make.result)
    return pipe


@pytest.fixture
def collector_restored() -> Iterator[None]:
    """Whatever a test does to the switch, the suite's collector ends as it began."""
    was = gc.isenabled()
    try:
        yield
    finally:
        (gc.enable if was else gc.disable)()


def _collector_seen_by(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[bool]:
    """Whether the collector was on each time ``owner.name`` was called (a method too)."""
    seen: list[bool] = []
    original = getattr(owner, name)

    def noting(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, noting)
    return seen


@pytest.fixture
def seen_while_building(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the collector was on while the graph's builder ran, once per build."""
    return _collector_seen_by(monkeypatch, graph_module._Builder, "build")


@pytest.mark.usefixtures("collector_restored")
@pytest.mark.parametrize("on", [True, False])
def test_build_graph_builds_with_the_collector_off_and_leaves_it_as_it_was(
    on: bool, seen_while_building: list[bool]
) -> None:
    (gc.enable if on else gc.disable)()
    frozen = gc.get_freeze_count()
    graph = build_graph(_pipe())
    assert graph.node("use").deps == (graph.index["make"],)
    assert seen_while_building == [False]
    assert gc.isenabled() is on
    assert gc.get_freeze_count() == frozen  # the program may drop the graph


@pytest.mark.usefixtures("collector_restored")
def test_a_refused_recipe_gives_the_collector_back_too(seen_while_building: list[bool]) -> None:
    gc.enable()
    pipe = Recipe("pipe", In, ToolOut)
    pipe.add_step("use", tool, src=pipe.outputs.nowhere.result)
    with pytest.raises(RecipeGraphError, match="nowhere"):
        build_graph(pipe)
    assert seen_while_building == [False]
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_restored")
def test_a_pause_inside_a_pause_leaves_the_collector_off_for_the_outer_one() -> None:
    gc.enable()
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


class _Cycle:
    """Garbage only the collector can free, which says when it is freed."""

    freed: list[str]

    def __init__(self, freed: list[str]) -> None:
        self.freed = freed
        self.me = self

    def __del__(self) -> None:
        self.freed.append("freed")


@pytest.mark.usefixtures("collector_restored")
def test_garbage_made_during_a_pause_is_freed_once_the_collector_runs() -> None:
    gc.enable()
    freed: list[str] = []
    with collector_paused():
        _Cycle(freed)
        gc.collect()  # an explicit collection still runs, as Python's does
    assert freed == ["freed"]
    with collector_paused():
        _Cycle(freed)
    assert freed == ["freed"]  # nothing ran in between
    gc.collect()
    assert freed == ["freed", "freed"]


@pytest.mark.usefixtures("collector_restored")
@pytest.mark.parametrize("keep_plan", [True, False])
def test_the_static_checks_run_with_the_collector_off_too(
    keep_plan: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shinobi import plan as plan_module

    gc.enable()
    seen = _collector_seen_by(monkeypatch, plan_module, "preflight")
    graph = build_graph(_pipe())
    planned = plan_module.check_statically(graph, {"target": "x"}, keep_plan=keep_plan)
    assert (planned is not None) is keep_plan
    assert seen == [False]
    assert gc.isenabled()
