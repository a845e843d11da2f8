"""The dry run behind ``ninja run --dryrun``: plan statically, draw, run nothing."""

from __future__ import annotations

import os
from itertools import chain
from typing import Any

import click

from shinobi.cli.machine_output import emit, json_document

__all__ = ["show_dryrun"]


def show_dryrun(
    graph: Any,
    inputs: dict[str, Any],
    config: Any,
    backend: str | None,
    as_json: bool,
    plan: Any = None,
) -> None:
    from shinobi.backends.base import Backend
    from shinobi.cli.long_output import echo_lines
    from shinobi.dispatch import choose_backend, invocation_for
    from shinobi.plan import PlannedStep, cab_of, plan_graph
    from shinobi.render.dryrun import dryrun_lines
    from shinobi.session import Session

    session = Session(config=config, cwd=os.getcwd(), backend_name=backend)
    if plan is None:
        plan = plan_graph(graph, inputs, session.cwd)
    told = _check_local_backends(graph, session, plan)

    #: the step last asked about and its backend: a box's tag asks, then its
    #: command line (render_argv) asks again of the same step
    last: tuple[PlannedStep | None, str] = (None, "")

    def backend_of(step: PlannedStep) -> str:
        nonlocal last
        if last[0] is not step:
            last = (step, chosen_backend(step))
        return last[1]

    def chosen_backend(step: PlannedStep) -> str:
        kind = step.node.kind
        if kind == "recipe":  # its steps have backends; it has none (null, as a run says)
            return ""
        chosen = choose_backend(session, step.node)
        if kind == "python":  # what the run will say: "python" for a call here
            from shinobi.pystep_runner import placement

            return placement(session, step.name, step.node, chosen) or "python"
        return chosen

    #: what the backends would warn of as the run starts, each said once
    warnings: dict[str, None] = {}
    #: each backend by name, and whether it runs the argv as it is (no invocation to
    #: build): the session makes one of each, so the answer holds for every step
    backends: dict[str, tuple[Backend, bool]] = {}

    def render_argv(step: PlannedStep) -> list[str] | None:
        cab = cab_of(step.node.step)
        if cab is None or step.argv is None:
            return None
        if problem := _unstartable(step.argv):
            warnings[f"step {step.name!r}: {problem}; the run would fail this step"] = None
        name = backend_of(step)
        known = backends.get(name)
        if known is None:
            made = session.backend(name)
            known = backends[name] = made, type(made).render is Backend.render
        backend, as_is = known
        if as_is:  # the argv itself: no invocation to build
            return list(step.argv)
        invocation = invocation_for(session, step.name, step.node, cab, step.argv, step.paths)
        rendered = backend.render_for_job(invocation)
        warnings.update(dict.fromkeys(rendered.warnings))
        return rendered.argv

    from shinobi.step_turns import plan_turns

    def turns_of(planned: Any) -> dict[int, set[int]]:  # the order -j N keeps (step_turns)
        return plan_turns(planned, config.execution.max_workers)

    if as_json:
        document = _plan_json(plan, backend_of, render_argv, turns_of)
    else:
        total = graph.working_steps()  # what runs: a nested recipe is its steps, as graph says
        summary = f"{total} step{'' if total == 1 else 's'}; dry run: nothing was executed"
        echo_lines(chain(dryrun_lines(plan, backend_of, render_argv, turns_of=turns_of), [summary]))
    said = [*warnings, *_plan_warnings(plan, graph, session)]
    for warning in said:
        click.echo(f"ninja: warning: {warning}", err=True)
    if as_json:  # what stderr said, for a check that reads only the plan (as a run's JSON)
        document["warnings"] = [*told, *said]
        emit(json_document(document))


def _unstartable(argv: Any) -> str | None:
    """Why no program could be given ``argv`` (a NUL byte in a value), as the run
    says when the step fails to start; the dry run showed it as ``$'x\\x00y'``
    and said nothing. Nearly every command is plain text: one test says so."""
    words = "".join(argv)
    if words.isascii() and "\0" not in words:
        return None
    from shinobi.backends.process import unpassable

    refused = unpassable(argv)
    return None if refused is None else str(refused)


def _check_local_backends(graph: Any, session: Any, plan: Any) -> list[str]:
    """Refuse what the run would refuse of the backends that need no engine to check
    (a venv that is not there, a tool it lacks), and say what they would warn of;
    engines' own checks (is the daemon up?) are left to the run, so a dry run
    works on a laptop without docker. Their commands are checked as they are drawn.
    Returns the warnings it said."""
    from shinobi.runner import precheck_backends

    precheck_backends(graph, session, lambda: plan, only=("native", "venv"))
    told = list(session.warnings)
    for warning in told:
        click.echo(f"ninja: warning: {warning}", err=True)
    return told


def _plan_warnings(plan: Any, graph: Any, session: Any) -> list[str]:
    """What the run would warn of before its first step or as a scatter starts:
    steps or slices writing one file, loops sharing an until file, programs not found."""
    from shinobi.programs import missing_programs
    from shinobi.shared_slices import planned_slice_warnings
    from shinobi.stale_until import shared_until_warnings, until_files

    return [
        *_clashes(plan),
        *planned_slice_warnings(plan, session.cwd),
        *shared_until_warnings(until_files(plan, session.cwd)),
        *missing_programs(graph, session),
    ]


def _clashes(plan: Any, prefix: str = "") -> list[str]:
    """Steps that produce the very same output, as the run warns of them (with
    several workers: at one it plans no turns, and says nothing)."""
    from shinobi.step_turns import clash_warnings

    found = list(clash_warnings(plan, prefix))
    for step in plan.steps:
        if step.children is not None:
            found += _clashes(step.children, f"{step.name}.")
    return found


def _plan_json(plan: Any, backend_of: Any, render_argv: Any, turns_of: Any) -> dict[str, Any]:
    from shinobi.render.dryrun import guard_path, slices_take_turns
    from shinobi.render.formats import node_facts

    def steps_json(planned: Any) -> list[dict[str, Any]]:
        turns = turns_of(planned)
        entries = []
        for step in planned.steps:
            entry = step_json(step, planned.graph)
            waits = sorted(turns.get(step.node.index, ()))
            if waits:  # besides its wiring: a path it shares with them, one rewrites
                entry["waits_for_turn"] = [planned.graph.nodes[i].name for i in waits]
            entries.append(entry)
        return entries

    def step_json(step: Any, graph: Any) -> dict[str, Any]:
        node = step.node
        entry: dict[str, Any] = {
            "name": step.name,
            "kind": node.kind,
            "backend": backend_of(step) or None,
            "depends_on": [graph.nodes[d].name for d in node.deps],
            "argv": render_argv(step),
            "paths": [
                {"path": u.path, "role": u.role, "writable": u.writable, "mutable": u.mutable}
                for u in step.paths
            ],
        }
        entry.update(node_facts(node))
        if node.guard is not None:
            known = guard_path(plan, node.guard)
            entry["loop"]["skipped_if_exists"] = known if known is not None else str(node.guard)
        if step.slices is not None:
            entry["slices"] = [step_json(s, graph) for s in step.slices]
            turns = slices_take_turns(step)
            if turns is not None:
                entry["slices_take_turns"] = turns
        if step.children is not None:
            entry["steps"] = steps_json(step.children)
        if step.error:
            entry["error"] = step.error
        return entry

    return {"recipe": plan.graph.recipe.name, "steps": steps_json(plan)}
