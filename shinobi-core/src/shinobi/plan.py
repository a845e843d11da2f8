"""Resolved values: what every step of a graph will be given, as far as is knowable.

The executor resolves wiring against real results; the dry-run renderer and
the offload compilers resolve it against what is known statically (recipe
inputs, passthroughs, implicit templates, defaults). Both go through
:func:`resolve_value`, so a dry run shows exactly what a run will do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shinobi.backends.base import PathUse
from shinobi.graph import Graph, Node
from shinobi.steps.argv import Unknown, path_uses, render_argv
from shinobi.steps.outputs import static_outputs
from shinobi.steps.refs import InputRef, OutputRef
from shinobi.steps.types import field_values, fields_of

__all__ = [
    "Plan",
    "PlannedStep",
    "cab_of",
    "plan_graph",
    "preflight",
    "resolve_value",
    "resolve_wiring",
    "scatter_slices",
    "validate_inputs",
]


def resolve_value(value: Any, inputs: Mapping[str, Any], output: Callable[[OutputRef], Any]) -> Any:
    """A wiring value with its references replaced by what they point at."""
    if isinstance(value, InputRef):
        return inputs.get(value.field)
    if isinstance(value, OutputRef):
        return output(value)
    if isinstance(value, list):
        return [resolve_value(v, inputs, output) for v in value]
    return value


def resolve_wiring(
    node: Node, inputs: Mapping[str, Any], output: Callable[[OutputRef], Any]
) -> dict[str, Any]:
    return {k: resolve_value(v, inputs, output) for k, v in node.wiring.items()}


def scatter_slices(node: Node, values: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """One input dict per slice; None when a scattered list is not known yet.

    Raises ValueError naming the fields and their lengths when they disagree.
    """
    lengths: dict[str, int] = {}
    for name in node.scatter:
        value = values.get(name)
        if isinstance(value, Unknown):
            return None
        if not isinstance(value, list | tuple):
            raise ValueError(
                f"step {node.name!r}: scattered input {name!r} must be a list at run time,"
                f" got {type(value).__name__}"
            )
        lengths[name] = len(value)
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise ValueError(
            f"step {node.name!r}: scattered inputs must have the same length ({detail})"
        )
    count = next(iter(lengths.values()), 0)
    return [{**values, **{name: values[name][i] for name in node.scatter}} for i in range(count)]


def validate_inputs(node: Node, values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Values checked and coerced by the step's inputs model, defaults filled in."""
    from pydantic import ValidationError

    try:
        model = node.step.inputs_model.model_validate(dict(values))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or "?"
        raise ValueError(f"{where}: input {loc!r}: {first.get('msg')}") from None
    return field_values(model)


def cab_of(step: Any) -> Any:
    """The cab that runs for a step (an orchestration function drives one), or None."""
    kind = getattr(step, "kind", None)
    if kind == "cab":
        return step
    if kind == "function":
        return step.cab
    return None


@dataclass(slots=True)
class PlannedStep:
    """A step as it will run, resolved as far as is statically possible."""

    name: str
    node: Node
    values: dict[str, Any]
    outputs: dict[str, Any]
    argv: list[str] | None = None
    paths: tuple[PathUse, ...] = ()
    slices: list[PlannedStep] | None = None
    children: Plan | None = None
    error: str | None = None


@dataclass(slots=True)
class Plan:
    """Every step of a graph with its statically resolved values."""

    graph: Graph
    inputs: dict[str, Any]
    steps: list[PlannedStep] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)


def _defaults(node: Node, values: dict[str, Any]) -> dict[str, Any]:
    for name, spec in fields_of(node.step.inputs_model).items():
        if name not in values and not spec.required:
            values[name] = spec.default
    return values


def _plan_step(name: str, node: Node, values: dict[str, Any], cwd: str) -> PlannedStep:
    cab = cab_of(node.step)
    if node.kind == "recipe":
        assert node.subgraph is not None
        child = plan_graph(node.subgraph, values, cwd, prefix=f"{name}.")
        return PlannedStep(name, node, values, dict(child.outputs), children=child)
    if cab is None:
        outs = {f: Unknown(name, f) for f in fields_of(node.step.outputs_model)}
        return PlannedStep(name, node, values, outs)
    outs = static_outputs(cab, name, values)
    return PlannedStep(
        name,
        node,
        values,
        outs,
        argv=render_argv(cab, values),
        paths=path_uses(cab, values, outs, cwd),
    )


def plan_graph(graph: Graph, inputs: Mapping[str, Any], cwd: str, prefix: str = "") -> Plan:
    """Resolve every step of ``graph`` statically against the recipe ``inputs``."""
    plan = Plan(graph=graph, inputs=dict(inputs))
    planned: dict[str, PlannedStep] = {}

    def output(ref: OutputRef) -> Any:
        step = planned.get(ref.step)
        if step is None:
            return Unknown(ref.step, ref.field)
        if step.slices is not None:
            return [s.outputs.get(ref.field, Unknown(s.name, ref.field)) for s in step.slices]
        if step.node.scatter:
            return Unknown(step.name, ref.field)
        return step.outputs.get(ref.field, Unknown(ref.step, ref.field))

    by_index: list[PlannedStep | None] = [None] * len(graph.nodes)
    for i in graph.topological_order():
        node = graph.nodes[i]
        name = f"{prefix}{node.name}"
        values = _defaults(node, resolve_wiring(node, plan.inputs, output))
        try:
            slices = scatter_slices(node, values) if node.scatter else None
        except ValueError as exc:
            step = PlannedStep(name, node, values, {}, error=str(exc))
        else:
            if not node.scatter:
                step = _plan_step(name, node, values, cwd)
            else:
                # A scattered step is its slices: the whole lists are no command line.
                step = PlannedStep(name, node, values, {})
                if slices is not None:
                    step.slices = [
                        _plan_step(f"{name}[{k}]", node, v, cwd) for k, v in enumerate(slices)
                    ]
                    step.paths = tuple(u for part in step.slices for u in part.paths)
        planned[node.name] = step
        by_index[i] = step
    plan.steps = [s for s in by_index if s is not None]
    plan.outputs = {k: resolve_value(v, plan.inputs, output) for k, v in graph.outputs.items()}
    return plan


def preflight(
    graph: Graph, inputs: Mapping[str, Any], cwd: str | None = None, *, plan: Plan | None = None
) -> None:
    """Checks that need values but no run: every scatter whose lists are known
    before the run (recipe inputs, literals, the gathered outputs of steps
    scattered over those), nested recipes included, must scatter lists of
    equal length.

    Raises ValueError naming the step and fields; it is the dry run's own
    static resolution, so it costs what planning costs (linear in the steps).
    A caller that has planned ``graph`` already (the dry run) passes ``plan``
    so the work is not done twice.
    """
    import os

    if plan is None:
        if not _can_fail(graph):
            return
        plan = plan_graph(graph, inputs, cwd or os.getcwd())
    error = _first_error(plan.steps)
    if error is not None:
        raise ValueError(error)


def _can_fail(graph: Graph) -> bool:
    """Whether planning ``graph`` can find a problem at all.

    Only a scatter (lists of unequal length) or an output template (one that
    cannot be filled) can; a recipe with neither is not planned just to check
    it, which would cost a run as much as its dry run.
    """
    for _, node in graph.walk():
        if node.scatter:
            return True
        cab = cab_of(node.step)
        if cab is not None and any(m.implicit or m.harvest for m in cab.field_meta.values()):
            return True
    return False


def _first_error(steps: list[PlannedStep]) -> str | None:
    for step in steps:
        if step.error:
            # scatter_slices names the step as declared; nested ones get their path.
            return step.error.replace(f"step {step.node.name!r}", f"step {step.name!r}", 1)
        for part in [*(step.slices or []), step]:
            if part.children is not None:
                found = _first_error(part.children.steps)
                if found is not None:
                    return found
    return None
