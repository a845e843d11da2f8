"""Steps that share a path one of them writes take turns when several workers run.

Two steps that both write ``same.txt``, or one that rewrites an MS another
reads, are not wired to each other, so the graph alone would let a run with
``max_workers`` above 1 start them together: a race whose winner decides the
data. ``ninja compile`` orders such jobs (see
:mod:`shinobi.offload.ordering`); a local run keeps the very same order, so a
recipe gives the same result on a laptop and on a cluster. At one worker the
steps already run one at a time in that order, and nothing is planned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from shinobi.graph import Graph

if TYPE_CHECKING:
    from shinobi.backends.base import PathUse
    from shinobi.plan import Plan, PlannedStep

__all__ = ["clash_warnings", "plan_turns", "step_turns"]


def step_turns(
    graph: Graph, values: Mapping[str, Any], cwd: str, prefix: str = ""
) -> tuple[dict[int, set[int]], list[str]]:
    """For each step that must wait, the steps it waits for (node indices), and
    a warning for each pair that produces the very same output.

    Paths known only once the run makes them cannot be compared beforehand;
    those steps keep only their wiring's order, as in a compiled run.
    """
    from shinobi.errors import ShinobiError
    from shinobi.plan import plan_graph

    try:
        plan = plan_graph(graph, values, cwd, prefix, check=False)
    except (ShinobiError, ValueError):  # the step that cannot be planned fails when it runs
        return {}, []
    waits, clashes = _turns(plan)
    return waits, [*_clash_warnings(graph, clashes, prefix), *_harvests_overlapping(plan, prefix)]


def clash_warnings(plan: Plan, prefix: str = "") -> list[str]:
    """A warning for each pair of ``plan``'s steps that produce the very same output,
    for a dry run (a run says them as :func:`step_turns` plans its turns).

    Such a pair produces one path spelt alike (see ``path_turns``), so only a
    plan where two steps do is ordered in full: a dry run at one worker plans
    no turns, and ordering 10,000 steps took about 0.2 s. Two steps that
    produce one path both name it as an output, which is looked for first: a
    plan where no two do needs not even load the ordering rules.
    """
    overlapping = _harvests_overlapping(plan, prefix)
    if not _shared(plan, _names_output):
        return overlapping
    from shinobi.offload.ordering import produces

    if not _shared(plan, produces):
        return overlapping
    return [*_clash_warnings(plan.graph, _turns(plan)[1], prefix), *overlapping]


def _harvests_overlapping(plan: Plan, prefix: str) -> list[str]:
    """A warning for each step whose harvest glob also matches what a step it is not
    ordered with writes (``img-*.fits`` and ``img-b-*.fits``): what it collects
    then depends on whether the other ran first, which at several workers is the
    timing's choice. Within one scatter, :mod:`shinobi.shared_slices` says it."""
    globs = {
        i: patterns
        for i, step in enumerate(plan.steps)
        if (patterns := [u.path for u in _paths_of(step) if u.pattern and u.role == "output"])
    }
    if not globs:  # most recipes: nothing harvested, nothing compared
        return []
    from shinobi.shared_slices import globs_overlap

    graph, warnings = plan.graph, []
    for i, mine in globs.items():
        for j, other in enumerate(plan.steps):
            if j == i:
                continue
            theirs = [u.path for u in _paths_of(other) if u.role == "output"]
            hit = next(((w, t) for w in mine for t in theirs if globs_overlap(w, t)), None)
            if hit is None or _wired(graph, i, j) or _wired(graph, j, i):
                continue
            wide, narrow = hit
            name, other_name = f"{prefix}{graph.nodes[i].name}", f"{prefix}{other.name}"
            warnings.append(
                f"step {name!r} harvests {wide}, which also matches {narrow} of step"
                f" {other_name!r}, and nothing orders the two: what {name!r} collects depends"
                f" on whether {other_name!r} ran first; make the pattern match only the"
                f" files {name!r} writes, or wire one after the other"
            )
    return warnings


def _names_output(use: PathUse) -> bool:
    return use.role == "output"


def _shared(plan: Plan, counted: Callable[[PathUse], bool]) -> bool:
    """Whether two of ``plan``'s steps have a ``counted`` use of one path spelt alike
    (in declaration order: the order they run in does not change the answer)."""
    first: dict[str, int] = {}
    for step, planned in enumerate(plan.steps):
        for use in _paths_of(planned):
            if counted(use) and first.setdefault(use.path, step) != step:
                return True
    return False


def _clash_warnings(
    graph: Graph, clashes: Mapping[tuple[int, int], list[str]], prefix: str
) -> list[str]:
    warnings = []
    for (before, after), paths in clashes.items():
        if _wired(graph, before, after):  # a loop's cycles: one after the other by design
            continue
        first, second = (f"{prefix}{graph.nodes[i].name}" for i in (before, after))
        warnings.append(
            f"steps {first!r} and {second!r} both write {', '.join(paths)}, so the product of"
            f" {second!r} replaces that of {first!r}: give each its own output path"
            f" ({second!r} waits for {first!r}, as a compiled run orders them)"
        )
    return warnings


def plan_turns(plan: Plan, max_workers: int) -> dict[int, set[int]]:
    """The turns a run keeps among ``plan``'s steps besides their wiring (node
    indices, as :func:`step_turns`): none at one worker, the recipe's own
    ``max_workers`` else ``max_workers``. A turn the step's own dependency
    already keeps is left out.

    For a dry run, which shows the order the run will keep from the plan it drew.
    """
    workers = plan.graph.recipe.max_workers or max_workers
    if workers == 1 or len(plan.graph.nodes) < 2:
        return {}
    nodes = plan.graph.nodes
    besides = {i: waits - set(nodes[i].deps) for i, waits in _turns(plan)[0].items()}
    return {i: waits for i, waits in besides.items() if waits}


def _turns(plan: Plan) -> tuple[dict[int, set[int]], dict[tuple[int, int], list[str]]]:
    """Each waiting step's turns, and for each pair the outputs both produce."""
    from shinobi.offload.ordering import path_turns

    order, per_step = _uses(plan)
    waits: dict[int, set[int]] = {}
    clashes: dict[tuple[int, int], list[str]] = {}  # a pair: the outputs both produce
    for turn in path_turns(per_step):
        before, after = order[turn.before], order[turn.after]
        waits.setdefault(after, set()).add(before)
        if turn.same_output:
            clashes.setdefault((before, after), []).append(turn.path)
    return waits, clashes


def _uses(plan: Plan) -> tuple[Sequence[int], list[Sequence[PathUse]]]:
    """The plan's nodes in the order one worker runs them, and each one's paths
    (its slices' together), whole: between steps, an input folder another step
    puts a file in is still a read of it (a mosaic given ``imgs`` may read every
    image there), unlike between one scatter's slices
    (:func:`~shinobi.shared_slices.compared_uses`)."""
    order = plan.graph.topological_order()
    steps = plan.steps
    return order, [_paths_of(steps[i]) for i in order]


def _paths_of(step: PlannedStep) -> Sequence[PathUse]:
    """A planned step's paths with those of its slices and nested steps: the
    step's own list when it has neither (most steps; the caller only reads it)."""
    if step.slices is None and step.children is None:
        return step.paths
    from shinobi.shared_slices import every_planned_step

    return [use for part in every_planned_step([step]) for use in part.paths]


def _wired(graph: Graph, before: int, after: int) -> bool:
    """Whether node ``after`` waits for node ``before`` through its wiring."""
    seen: set[int] = set()
    todo = [after]
    while todo:
        for dep in graph.nodes[todo.pop()].deps:
            if dep == before:
                return True
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return False
