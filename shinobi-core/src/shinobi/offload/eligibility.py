"""Whether a recipe can be offloaded, and every reason it cannot.

An offloaded workflow runs with no Python behind it, so the compiler must
know every job and every edge up front. A recipe is refused when any step
needs live Python (an orchestration function, a pystep), a virtualenv the
job would not have, a MUTABLE input that is not a path, or a value other
than a statically known path handed from one step to another (a wrangler's
match, a harvest glob, a pystep's result); and when a loop names its outputs
per iteration or a scatter's width is only known at run time. All reasons
are collected, not just the first, so one edit-compile round fixes them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from shinobi.graph import Node, output_refs
from shinobi.offload.wrapping import runtime_of
from shinobi.plan import Plan, PlannedStep, cab_of
from shinobi.steps.argv import Unknown, has_secret
from shinobi.steps.refs import OutputRef
from shinobi.steps.types import fields_of

__all__ = ["Refusal", "check_offloadable"]

_REMOTE = "or run the recipe as it is with `ninja run` on a host of the cluster"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One reason a recipe cannot be offloaded: what, and how to fix it."""

    rule: str
    reason: str
    fix: str

    def __str__(self) -> str:
        return f"{self.reason}; {self.fix}"


def _where(node: Node, prefix: str) -> str:
    """The step as the user wrote it: a loop's body step, not one unrolled iteration."""
    if node.loop is None or node.iteration is None:
        return f"step {prefix + node.name!r}"
    head = f"{node.loop}.{node.iteration}"
    inner = node.name[len(head) + 1 :] if node.name.startswith(head + ".") else ""
    loop = prefix + node.loop
    return f"step {inner!r} of loop {loop!r}" if inner else f"the body of loop {loop!r}"


def _has_unknown(value: Any) -> bool:
    if isinstance(value, Unknown):
        return True
    if isinstance(value, list | tuple):
        return any(_has_unknown(v) for v in value)
    return False


def _type_name(annotation: Any) -> str:
    return str(getattr(annotation, "__name__", None) or annotation).replace("typing.", "")


@dataclass(frozen=True, slots=True)
class _CabFacts:
    """What a cab's declaration alone says about offloading its steps.

    The same for every step the cab runs, so worked out once per cab
    (:meth:`_Checker.facts`): a 10,000-step recipe runs a handful of cabs.
    The refusals themselves are still worded per step, which they name.
    """

    #: Each MUTABLE input that is not a path: (name, what it is, the fix).
    mutable: tuple[tuple[str, str, str], ...]
    #: The first ``error`` wrangler, as shown, or None.
    judging: str | None
    #: Each required output only an output wrangler fills: (name, the wrangler shown).
    wrangled_only: tuple[tuple[str, str], ...]
    #: Each output -> why its declaration keeps it from crossing to another
    #: step (the words for a reference to it), or None when only its value can.
    crossing: dict[str, Callable[[OutputRef], str] | None]

    @classmethod
    def of(cls, cab: Any) -> _CabFacts:
        return cls(_mutable_objects(cab), _judging(cab), _wrangled_only(cab), _crossing(cab))


def _mutable_objects(cab: Any) -> tuple[tuple[str, str, str], ...]:
    """Each MUTABLE input of ``cab`` that is not a path, with what it is and the fix."""
    found = []
    inputs = fields_of(cab.inputs_model)
    for name, meta in cab.field_meta.items():
        spec = inputs.get(name)
        if not meta.mutable or spec is None:
            continue
        if spec.path_kind is not None or meta.dtype is not None:
            continue
        if spec.is_text:  # a path (or a list of them) written as text, most likely
            declared = "list[str]" if spec.is_list else "str"
            said = (
                f"it is declared {declared}, so the compiler cannot tell it names files, nor"
                " order the jobs that rewrite them"
            )
            kind = "list[Path]" if spec.is_list else "a Path"
            fix = f"declare it {kind} (or File, Directory, MS)"
        else:
            said = (
                f"it is declared {_type_name(spec.annotation)}, a live Python object that"
                " cannot cross a node boundary"
            )
            fix = f"make it a path the tool rewrites in place, {_REMOTE}"
        found.append((name, said, fix))
    return tuple(found)


def _judging(cab: Any) -> str | None:
    """The first of ``cab``'s wranglers that fails the step on what it prints, as shown."""
    return next((w.shown for w in cab.wranglers if w.action == "error"), None)


def _wrangled_only(cab: Any) -> tuple[tuple[str, str], ...]:
    """Each required output of ``cab`` only an output wrangler fills, with that
    wrangler shown, in the order of the wranglers. (A wrangled output has no
    other source: a Cab refuses one that also has a template, a glob or an
    input of its name.)"""
    outputs = fields_of(cab.outputs_model)
    found = []
    for wrangler in cab.wranglers:
        spec = outputs.get(wrangler.output or "")
        if wrangler.action == "output" and spec is not None and spec.required:
            found.append((spec.name, wrangler.shown))
    return tuple(found)


def _crossing(cab: Any) -> dict[str, Callable[[OutputRef], str] | None]:
    """Each output of ``cab`` -> why its declaration keeps it from crossing
    between offloaded steps (the words for a reference to it), or None."""
    wrangled = {w.output for w in cab.wranglers if w.action == "output"}
    found: dict[str, Callable[[OutputRef], str] | None] = {}
    for name, spec in fields_of(cab.outputs_model).items():
        meta = cab.meta(name)
        if name in wrangled:
            found[name] = _wrangled
        elif spec.path_kind is None and meta.dtype is None:
            found[name] = partial(_not_a_path, _type_name(spec.annotation))
        elif meta.harvest:
            found[name] = partial(_harvested, meta.harvest)
        else:
            found[name] = None
    return found


def _wrangled(ref: OutputRef) -> str:
    return f"{ref} is set by a wrangler from the tool's output, known only after it runs"


def _not_a_path(declared: str, ref: OutputRef) -> str:
    return (
        f"{ref} is not a path (it is declared {declared}); only"
        " filesystem paths can cross between offloaded steps"
    )


def _harvested(pattern: str, ref: OutputRef) -> str:
    return f"{ref} is collected by the glob {pattern!r} after {ref.step!r} runs"


class _Checker:
    def __init__(self, default_backend: str = "native", container_runtime: str = "auto") -> None:
        self.default_backend = default_backend
        self.container_runtime = container_runtime
        self.found: dict[tuple[str, str], Refusal] = {}
        self.indexes: dict[int, dict[str, PlannedStep]] = {}
        #: each cab met so far (the key keeps it alive) -> what its declaration says
        self.cabs: dict[Any, _CabFacts] = {}
        #: (id() of a plan, step, field) -> :meth:`produced`'s answer. Every plan
        #: checked is held by the one ``check_offloadable`` was given, which
        #: outlives the checker, so no id here can be reused while it is asked.
        self.answers: dict[tuple[int, str, str], str | None] = {}

    def facts(self, cab: Any) -> _CabFacts:
        """What ``cab``'s declaration says, worked out at its first step: a large
        recipe runs the same few cabs in every one of its steps."""
        found = self.cabs.get(cab)
        if found is None:
            found = self.cabs[cab] = _CabFacts.of(cab)
        return found

    def by_node(self, plan: Plan) -> dict[str, PlannedStep]:
        index = self.indexes.get(id(plan))
        if index is None:
            index = {s.node.name: s for s in plan.steps}
            self.indexes[id(plan)] = index
        return index

    def refuse(self, rule: str, reason: str, fix: str, key: str | None = None) -> None:
        """Record a reason once (a loop body repeats in every iteration: ``key`` merges them)."""
        self.found.setdefault((rule, key or reason), Refusal(rule, reason, fix))

    # -- what crosses between steps ------------------------------------------
    def produced(self, plan: Plan, ref: OutputRef) -> str | None:
        """Why ``ref`` is not a statically known path, or None when it is.

        Answered once per output of a plan's step: a step many steps read
        (the root of a fan-out of 10,000) is asked about by every reader, and
        the answer depends on nothing but the plan and the output's name.
        """
        key = (id(plan), ref.step, ref.field)
        if key in self.answers:
            return self.answers[key]
        answer = self.answers[key] = self._produced(plan, ref)
        return answer

    def _produced(self, plan: Plan, ref: OutputRef) -> str | None:
        producer = self.by_node(plan).get(ref.step)
        if producer is None:
            return f"{ref} is not known before the run"
        kind = producer.node.kind
        if kind == "recipe":
            if producer.children is None:  # scattered: its slices, refused on their own
                return f"{ref} is gathered from a nested recipe scattered at run time"
            wired = producer.children.graph.outputs.get(ref.field)
            # a bare reference, or references inside a list the recipe builds
            for inner in output_refs(wired):
                problem = self.produced(producer.children, inner)
                if problem:
                    return problem
            return None
        if kind == "python":
            return f"{ref} is returned by a @pystep at run time"
        if kind == "function":
            return f"{ref} comes from an orchestration function at run time"
        cab = cab_of(producer.node.step)
        crossing = self.facts(cab).crossing
        if ref.field not in crossing:
            return f"{ref} is not an output of {cab.name!r}"
        declared = crossing[ref.field]
        if declared is not None:
            return declared(ref)
        parts = producer.slices if producer.slices is not None else [producer]
        values = [part.outputs.get(ref.field) for part in parts]
        if any(map(_has_unknown, values)):
            return f"{ref} is named only once {ref.step!r} has run"
        if any(v is None for v in values):
            return (
                f"{ref} has no value before {ref.step!r} runs (no passthrough input, no"
                " implicit template, no default)"
            )
        return None

    # -- one step --------------------------------------------------------------
    def step(self, plan: Plan, step: PlannedStep, prefix: str) -> None:
        node = step.node
        where = _where(node, prefix)
        kind = node.kind
        if step.error:
            self.refuse("plan", f"{where}: {step.error}", "fix the recipe")
        if has_secret(step.values):
            self.refuse(
                "secret",
                f"{where} is given a secret input (SecretStr), which a job script would hold"
                " in clear on shared storage",
                f"let the tool read the secret from a file only it can read, {_REMOTE}",
            )
        if kind == "function":
            self.refuse(
                "orchestration",
                f"{where} is an orchestration function (@step): how often and how its cab"
                " runs is decided by live Python",
                f"make it a plain Cab step, {_REMOTE}",
            )
        if kind == "python":
            self.refuse(
                "pystep",
                f"{where} is a @pystep: its body is Python, not a command line a job can run",
                f"wrap the work in a Cab (a script with a command line), {_REMOTE}",
            )
        if kind == "recipe" and node.scatter:
            self.refuse(
                "scatter",
                f"{where} is a nested recipe scattered over {', '.join(node.scatter)}: a"
                " compiled workflow scatters single steps, not recipes",
                f"scatter the steps inside the nested recipe instead, {_REMOTE}",
            )
        self.venv(node, where)
        cab = cab_of(node.step)
        if cab is not None:
            facts = self.facts(cab)
            self.mutable(facts, where)
            self.judged(cab.name, facts, where)
        for key, value in node.wiring.items():
            for ref in output_refs(value):
                problem = self.produced(plan, ref)
                if problem:
                    self.refuse(
                        "crossing",
                        f"{where}, input {key!r}: {problem}",
                        f"hand over a path the compiler can resolve (a passthrough or an"
                        f" implicit output), {_REMOTE}",
                        key=f"{where}/{key}",
                    )
        for ref in output_refs(node.guard) if node.guard is not None else ():
            problem = self.produced(plan, ref)
            if problem:
                self.refuse(
                    "guard",
                    f"loop {prefix + str(node.loop)!r}: its convergence test is not a path"
                    f" known at compile time ({problem})",
                    f"make `until` a path output (a flag file the body writes), {_REMOTE}",
                    key=f"{prefix}{node.loop}",
                )
        if node.scatter and step.slices is None and not step.error:
            self.refuse(
                "scatter",
                f"{where} scatters over {', '.join(node.scatter)}, whose length is known only"
                " at run time",
                f"scatter over a recipe input or a list of paths known up front, {_REMOTE}",
            )
        if node.previous is not None and step.slices is None:
            self.per_cycle(plan, step, where)

    def venv(self, node: Node, where: str) -> None:
        if node.subgraph is not None:
            return  # a nested recipe runs nothing itself: its steps are judged each
        step = node.step
        venv = node.venv or getattr(step, "venv", None)
        own = node.backend or getattr(step, "backend", None)
        backend = own or self.default_backend
        if not venv and backend != "venv":
            return
        if not venv and not own and self.in_image(step):
            return  # compiled with --container-runtime, it runs in its image, not the venv
        detail = f"venv {venv!r}" if venv else "backend 'venv'"
        fix = f"give the step a container image and use --container-runtime, {_REMOTE}"
        configured = not venv and not own  # the configuration's choice, not the recipe's
        if configured:
            where = f"{where} (and every step that names no backend)"
            detail = "backend 'venv', the configured backend.default"
            native = "SHINOBI_BACKEND_DEFAULT=native"
            fix = f"set backend.default to native for the compile ({native}), {fix}"
        self.refuse(
            "venv",
            f"{where} runs in a virtualenv ({detail}); an offloaded job would run without it",
            fix,
            key="venv:default" if configured else None,
        )

    def in_image(self, step: Any) -> bool:
        """Whether a compiled job runs ``step``, which names no backend, in its image."""
        cab = cab_of(step)
        runtime = runtime_of(self.container_runtime, self.default_backend)
        return runtime != "none" and cab is not None and bool(cab.image)

    def judged(self, cab: str, facts: _CabFacts, where: str) -> None:
        """A cab whose output a wrangler judges fails on what it prints, which
        only ninja reads: a job would pass on what ``ninja run`` fails. So does
        one whose required output only a wrangler fills: ``ninja run`` fails
        the step when no line matched. ``cab``: its name."""
        if facts.judging is not None:
            self.refuse(
                "wrangler",
                f"{where}: {cab!r} fails the step when its output matches"
                f" {facts.judging}, which a compiled job cannot check",
                f"make the tool exit non-zero on that error instead, {_REMOTE}",
                key=f"wrangler:{cab}:{where}",  # each step, loop iterations as one
            )
        for name, shown in facts.wrangled_only:
            self.refuse(
                "wrangler",
                f"{where}: {cab!r} output {name!r} is required and only its wrangler"
                f" {shown} fills it, from what the tool prints, which a compiled job"
                " cannot read: the job would pass where `ninja run` fails the step",
                f"give the output a default (`{name}: ... | None = None`), {_REMOTE}",
                key=f"wrangler:{cab}:{name}:{where}",
            )

    def mutable(self, facts: _CabFacts, where: str) -> None:
        """Refuse each MUTABLE input of the step's cab that is not a path."""
        for name, said, fix in facts.mutable:
            self.refuse(
                "mutable", f"{where}, input {name!r} is MUTABLE but not a path: {said}", fix
            )

    def per_cycle(self, plan: Plan, step: PlannedStep, where: str) -> None:
        previous = self.by_node(plan).get(str(step.node.previous))
        cab = cab_of(step.node.step)
        if previous is None or cab is None:
            return
        for name, spec in fields_of(cab.outputs_model).items():
            if spec.path_kind is None and cab.meta(name).dtype is None:
                continue
            before, now = previous.outputs.get(name), step.outputs.get(name)
            if _has_unknown(before) or _has_unknown(now) or before == now:
                continue
            self.refuse(
                "per-cycle",
                f"{where} names its output {name!r} per iteration ({before} in iteration"
                f" {previous.node.iteration}, {now} in iteration {step.node.iteration}), so a"
                " skipped iteration would leave its successors nothing to read",
                f"give the output one name for every iteration (do not template it on the"
                f" loop index), {_REMOTE}",
                key=f"{where}:{name}",
            )
            return

    def plan(self, plan: Plan, prefix: str) -> None:
        for step in plan.steps:
            self.step(plan, step, prefix)
            if step.children is not None:
                self.plan(step.children, f"{prefix}{step.node.name}.")


def check_offloadable(
    plan: Plan, default_backend: str = "native", container_runtime: str = "auto"
) -> list[Refusal]:
    """Every reason ``plan`` cannot be offloaded; empty when it can.

    ``default_backend`` is where a step that names no backend runs under
    ``ninja run`` (``backend.default``); ``container_runtime`` what runs the
    compiled jobs' images.
    """
    checker = _Checker(default_backend, container_runtime)
    if not _has_work(plan):  # a nested recipe with no steps of its own is no work either
        checker.refuse("empty", "the recipe has no steps: there is nothing to offload", "add steps")
    checker.plan(plan, "")
    return list(checker.found.values())


def _has_work(plan: Plan) -> bool:
    """Whether any step of ``plan``, however deeply nested, is more than a recipe."""
    return any(step.children is None or _has_work(step.children) for step in plan.steps)
