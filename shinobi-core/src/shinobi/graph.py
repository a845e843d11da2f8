"""build_graph: the one validated graph that the executor, the dry-run renderer
and every compiler consume, so they can never disagree.

Loops are unrolled here (``NAME.i.STEP``), references to a loop resolve to its
final iteration, and every wiring mistake is reported with the recipe, step
and field it concerns, and the nearest valid name.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import PosixPath
from typing import TYPE_CHECKING, Any

from shinobi.collector_paused import collector_paused
from shinobi.errors import RecipeGraphError, did_you_mean
from shinobi.steps.recipe import half_reference, name_problem
from shinobi.steps.refs import InputRef, OutputRef
from shinobi.steps.types import (
    KIND_NAMES,
    FieldSpec,
    PathType,
    fields_of,
    on_disk_kind,
    unwrap_annotation,
)

if TYPE_CHECKING:
    from shinobi.resources import Resources
    from shinobi.steps.recipe import LoopSpec, Recipe

__all__ = [
    "Graph",
    "Node",
    "RecipeGraphError",
    "build_graph",
    "output_refs",
    "refs_in",
    "same_shape",
]

_MISSING = object()


@dataclass(slots=True)
class Node:
    """One schedulable step of a recipe, after loops are unrolled.

    ``guard`` (loop iterations after the first) is a path value: when it exists
    the loop has converged and this step is skipped, passing through the
    outputs of ``previous``, the same body step one iteration earlier.
    ``until`` names the output of this step that is such a path for the next
    iteration (in the last iteration, the path that tells whether the loop
    converged at all): the step produced it only if its run wrote the file.
    """

    index: int
    name: str
    step: Any
    wiring: dict[str, Any]
    scatter: tuple[str, ...] = ()
    resources: Resources | None = None
    backend: str | None = None
    venv: str | None = None
    #: the indices of the nodes it waits on, sorted (``topological_order`` relies on it)
    deps: tuple[int, ...] = ()
    guard: Any = None
    previous: str | None = None
    loop: str | None = None
    iteration: int | None = None
    subgraph: Graph | None = None
    until: str | None = None

    @property
    def kind(self) -> str:
        return str(getattr(self.step, "kind", "?"))


@dataclass(slots=True)
class Graph:
    """A validated recipe: nodes in declaration order and the edges between them.

    ``handed_until`` maps a loop whose until path no step produces (a Recipe
    body exposing the path it was handed: ``set_output("flag",
    body.inputs.flag)``) to that path's value, the same in every iteration;
    no node carries ``until`` for such a loop, so the executor notes and
    checks the path by the loop's name.
    """

    recipe: Recipe
    nodes: list[Node]
    index: dict[str, int]
    outputs: dict[str, Any]
    dependants: list[list[int]] = field(default_factory=list)
    handed_until: dict[str, Any] = field(default_factory=dict)

    def node(self, name: str) -> Node:
        return self.nodes[self.index[name]]

    def topological_order(self) -> list[int]:
        """Node indices, dependencies first, ties by declaration order.

        Nearly always a step waits only on steps declared before it (its
        ``deps`` are sorted): declaration order is then that very order, told
        by one look at each step's last dependency rather than worked out on a
        heap.
        """
        nodes = self.nodes
        if all([not node.deps or node.deps[-1] < i for i, node in enumerate(nodes)]):
            return list(range(len(nodes)))
        import heapq

        indegree = [len(n.deps) for n in self.nodes]
        ready = [i for i, d in enumerate(indegree) if d == 0]
        heapq.heapify(ready)
        order: list[int] = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for j in self.dependants[i]:
                indegree[j] -= 1
                if indegree[j] == 0:
                    heapq.heappush(ready, j)
        return order

    def working_steps(self) -> int:
        """How many steps run something: nested recipes' steps, not the recipes."""
        return sum(1 for _, node in self.every_node() if node.subgraph is None)

    def walk(self, prefix: str = "") -> Iterator[tuple[str, Node]]:
        """Every node, nested recipes included, with its dotted path."""
        for within, node in self.every_node(prefix):
            yield f"{within}{node.name}", node

    def every_node(self, prefix: str = "") -> Iterator[tuple[str, Node]]:
        """Every node, nested recipes included, in :meth:`walk`'s order, with the
        prefix of its dotted path rather than the path: for a pass over 100,000
        steps that needs the path of few or none of them."""
        for node in self.nodes:
            yield prefix, node
            if node.subgraph is not None:
                yield from node.subgraph.every_node(f"{prefix}{node.name}.")


_REFS = (OutputRef, InputRef)
#: The references, by exact type: one set lookup per wired value.
_REF_KINDS = frozenset(_REFS)
#: What a wiring value may nest references in; cheaper in isinstance() than a union.
_CONTAINERS = (list, tuple, dict)
#: Wiring values that can hold no reference, by exact type (a subclass takes the
#: long way): most of a large recipe's values, checked with one set lookup.
_PLAIN = frozenset({str, int, float, bool, type(None), PosixPath})


def _refs(value: Any, kinds: Any) -> Sequence[Any]:
    """The items of ``kinds`` in a wiring value, at any depth of lists, tuples and
    dict values (what :func:`shinobi.plan.resolve_value` resolves): a reference
    the graph did not see would be read before its producer has run.

    A sequence, not a generator: building a graph, planning and compiling ask
    this of every wiring value, and most hold no reference at all.
    """
    if isinstance(value, kinds):
        return (value,)
    if isinstance(value, _CONTAINERS):
        found: list[Any] = []
        _collect(value, kinds, found)
        return found
    return ()


def _collect(value: Any, kinds: Any, found: list[Any]) -> None:
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, kinds):
            found.append(item)
        elif isinstance(item, _CONTAINERS):
            _collect(item, kinds, found)


def _ref_in_a_model(value: Any, model: str | None = None) -> tuple[Any, str] | None:
    """The first reference inside a pydantic model instance within ``value``, with
    the model's name; None when there is none. References are followed through
    lists, tuples and dicts only: one held by a model's field is handed to the
    step as the reference object."""
    if model is not None and isinstance(value, _REFS):
        return value, model
    if isinstance(value, _CONTAINERS):
        for item in value.values() if isinstance(value, dict) else value:
            if type(item) not in _PLAIN and (found := _ref_in_a_model(item, model)):
                return found
        return None
    fields = getattr(value, "__pydantic_fields_set__", None)
    if fields is None or isinstance(value, type):
        return None
    held = {**vars(value), **(getattr(value, "__pydantic_extra__", None) or {})}
    return _ref_in_a_model(held, model or type(value).__name__)


def _ref_words(ref: Any) -> str:
    """A reference as a recipe names it: ``step.field``, or the recipe input ``field``."""
    if isinstance(ref, OutputRef):
        return f"the reference to {ref.step}.{ref.field}"
    return f"the reference to the recipe input {ref.field!r}"


def same_shape(value: list[Any] | tuple[Any, ...], items: list[Any]) -> Any:
    """``items`` in ``value``'s kind of sequence: a list, a tuple, or ``value``'s
    own namedtuple class (whose constructor takes fields, not one iterable)."""
    if isinstance(value, list):
        return items
    make = getattr(type(value), "_make", None)
    return make(items) if make is not None else tuple(items)


def refs_in(value: Any) -> Sequence[OutputRef | InputRef]:
    """References inside a wiring value (a reference, or a list of them)."""
    return _refs(value, _REFS)


def output_refs(value: Any) -> Sequence[OutputRef]:
    """The dependency edges inside a wiring value (or a loop guard)."""
    return _refs(value, OutputRef)


def _resources_of(step: Any) -> Any:
    """What a step declares it needs: its own ``resources=``, else (an orchestration
    function) those of the cab it drives, which every ``ctx.run()`` runs."""
    own = getattr(step, "resources", None)
    if own is None and getattr(step, "kind", None) == "function":
        return getattr(step.cab, "resources", None)
    return own


def _scatter_of(step: Any) -> tuple[str, ...]:
    """The scatter a decorated step (``@shinobi.step``/``@pystep``) declares itself."""
    return tuple(getattr(step, "scatter", None) or ())


def _fields(model: Any) -> dict[str, Any]:
    """A model's fields by name (read-only: shared by every step using the model).

    Cached per model class: a large recipe asks for the same few models'
    fields once per step and per edge, and pydantic's ``model_fields`` is not
    a plain attribute lookup.
    """
    return _model_fields(model)


@cache
def _model_fields(model: Any) -> dict[str, Any]:
    return dict(getattr(model, "model_fields", {}))


def _defaults(model: Any) -> dict[str, Any]:
    """The defaults of ``model``'s optional fields (a factory that fails gives none:
    the field is then missing, and the step that needs it says so)."""
    found: dict[str, Any] = {}
    for name, info in _fields(model).items():
        if info.is_required():
            continue
        try:
            found[name] = info.get_default(call_default_factory=True)
        except Exception:  # the user's factory: its failure is not ours to report here
            continue
    return found


#: What a step may be: anything else is refused where it is wired.
_STEP_KINDS = ("cab", "recipe", "function", "python")


class _StepFacts:
    """What :meth:`_Builder.make_node` asks of a step object that depends on that
    object alone: worked out once per step object and build, not once per node.

    A large recipe wires the same few cabs into thousands of steps, and each of
    these is several attribute look-ups and calls. Every fact but ``inputs``
    is worked out when first asked, at the point of :meth:`~_Builder.make_node`
    that asked it before, so a step that cannot answer fails where it did.
    """

    def __init__(self, step: Any, kind: str) -> None:
        self.step = step  # held, so the id() this is kept by is not reused in the build
        self.kind = kind
        self.inputs = _fields(step.inputs_model)

    @cached_property
    def text_checked(self) -> frozenset[str]:
        """The inputs a reference wired to is checked against text for (see
        :meth:`_Builder.check_path_to_text`): those declared text, but for a
        cab's ``str`` input that ``ParamMeta(dtype=...)`` declares a path."""
        step = self.step
        declared = step.text_paths() if self.kind == "cab" else frozenset()
        specs = fields_of(step.inputs_model).items()
        return frozenset(n for n, s in specs if (s.text_values or s.is_text) and n not in declared)

    @cached_property
    def unfilled(self) -> str | None:
        """A cab's first required output nothing fills (see :meth:`Cab.unfilled_output`):
        a cab run as a step must be able to fill every one it declares."""
        return self.step.unfilled_output() if self.kind == "cab" else None

    @cached_property
    def resources(self) -> Any:
        return _resources_of(self.step)

    @cached_property
    def backend(self) -> Any:
        return getattr(self.step, "backend", None)

    @cached_property
    def venv(self) -> Any:
        return getattr(self.step, "venv", None)

    @cached_property
    def settings_ok(self) -> bool:
        """Whether the step's own ``backend``/``venv`` pass :meth:`_Builder.check_settings`."""
        backend, venv = self.backend, self.venv
        return (backend is None or isinstance(backend, str)) and (
            venv is None or (isinstance(venv, str) and bool(venv.strip()))
        )


class _Builder:
    def __init__(self, recipe: Recipe, path: str, enclosing: tuple[Recipe, ...] = ()) -> None:
        self.recipe = recipe
        self.where = f"recipe {path!r}"
        self.loops: dict[str, LoopSpec] = {}
        #: Each step object's facts, by its id(): the object is held by its facts.
        self.facts: dict[int, _StepFacts] = {}
        #: The recipes this one is nested in, outermost first, and itself.
        self.enclosing = (*enclosing, recipe)

    def fail(self, message: str) -> RecipeGraphError:
        return RecipeGraphError(f"{self.where}, {message}")

    def check_name(self, what: str, name: object, kind: str = "step") -> None:
        """Refuse a name no log file or script can be named after (see :func:`name_problem`)."""
        problem = name_problem(name)
        if problem is not None:
            raise self.fail(
                f"{what} {name!r}: the name {problem}; give the {kind} a name such as"
                " 'calibrate' (not empty, not only dots, no '/', no control or invisible"
                " characters)"
            )

    def check_slice_names(self, entries: list[dict[str, Any]], index: dict[str, int]) -> None:
        """Refuse a step named like a slice of a scattered sibling (``image[0]``).

        Slices are named ``STEP[N]`` in results, progress and logs, so such a
        step would write into a slice's log file and be confused with it.
        """
        for name in index:
            if not name.endswith("]"):  # the usual name: one check per step
                continue
            match = _SLICE_NAME.fullmatch(name)
            if match is None or match.group(1) not in index:
                continue
            if entries[index[match.group(1)]]["scatter"]:
                raise self.fail(
                    f"step {name!r}: the name is how slice {match.group(2)} of the scattered"
                    f" step {match.group(1)!r} is named; give the step another name"
                )

    def check_nested_names(self, nodes: list[Node]) -> None:
        """Refuse a step named like a step inside a nested sibling (``sub.e``).

        A nested recipe's steps are named ``PARENT.STEP`` in results, progress
        and logs, so a flat step of that name would share their log file.
        """
        names = {node.name for node in nodes}
        for node in nodes:
            if node.subgraph is None:
                continue
            for inner in _qualified_names(node.subgraph):
                full = f"{node.name}.{inner}"
                if full in names:
                    raise self.fail(
                        f"step {full!r}: the name is how step {inner!r} of the nested recipe"
                        f" {node.name!r} is named; give the step another name"
                    )
                names.add(full)

    def check_run_names(self, nodes: list[Node]) -> None:
        """Refuse two steps whose runs would be named alike at any depth.

        A scattered step's slices are ``STEP[k]`` and a nested recipe's steps
        ``PARENT.STEP`` (``PARENT[k].STEP`` when it is scattered), so a step
        ``s.e[0]`` beside a nested ``s`` that scatters ``e``, or a scattered
        ``n.x`` beside a nested ``n`` with a step ``x[0]``, shared one log file
        and one name in the results. The sibling checks above see one level.
        Names are grouped by their shape (every ``[k]`` alike) first, so only
        the rare names that share one are compared.
        """
        if not _any_scattered(nodes):  # nearly every recipe: no run is numbered
            return
        shapes: dict[str, list[tuple[str, _Segments]]] = {}
        for shown, segments in _run_names(nodes):
            key = _ANY_SLICE.sub("[]", shown) if "[" in shown else shown
            shapes.setdefault(key, []).append((shown, segments))
        for group in shapes.values():
            if len(group) < 2:
                continue
            for (a, a_at), (b, b_at) in itertools.combinations(group, 2):
                for plain, at in ((b, a_at), (a, b_at)):
                    pattern = _pattern(at)
                    if pattern is not None and re.fullmatch(pattern, plain):
                        raise self.fail(
                            f"step {plain!r}: the name is how the runs of a scattered step are"
                            f" named ({_numbered(at)}), so the two would share one log file"
                            " and one name in the results; give the step another name"
                        )

    # -- loops ---------------------------------------------------------------
    def check_loop(self, spec: LoopSpec) -> None:
        from shinobi.steps.recipe import Recipe as _Recipe

        where = f"loop {spec.name!r}"
        body = spec.body
        if isinstance(body, _Recipe):  # its steps are unrolled into this recipe's
            for inner in body.steps:
                self.check_name(f"{where}: body step", getattr(inner, "name", None))
        if getattr(body, "kind", None) not in ("recipe", "cab", "python", "function"):
            raise self.fail(f"{where}: the body must be a Recipe, a Cab or a pystep")
        if (
            isinstance(spec.max_iter, bool)
            or not isinstance(spec.max_iter, int)
            or spec.max_iter < 1
        ):
            raise self.fail(f"{where}: max_iter must be a whole number >= 1, not {spec.max_iter!r}")
        outs, ins = _fields(body.outputs_model), _fields(body.inputs_model)
        if spec.until not in outs:
            raise self.fail(
                f"{where}: until={spec.until!r} is not an output of the body"
                f"{did_you_mean(spec.until, outs)}"
            )
        self.check_body_steps(spec, where)
        self.check_until(spec, where)
        if not isinstance(spec.carry, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in spec.carry.items()
        ):
            raise self.fail(
                f"{where}: carry must map a body output to the body input it feeds next"
                f" iteration, e.g. carry={{'ms': 'ms'}}; not {spec.carry!r}"
            )
        for out, inp in spec.carry.items():
            if out not in outs:
                raise self.fail(
                    f"{where}: carry names {out!r}, which is not an output of the body"
                    f"{did_you_mean(out, outs)} (a carried value must be both an output and an"
                    " input of the body)"
                )
            if inp not in ins:
                raise self.fail(
                    f"{where}: carry feeds {inp!r}, which is not an input of the body"
                    f"{did_you_mean(inp, ins)} (a carried value must be both an output and an"
                    " input of the body)"
                )
        if spec.index_input is not None and spec.index_input not in ins:
            raise self.fail(
                f"{where}: index_input={spec.index_input!r} is not an input of the body"
                f"{did_you_mean(spec.index_input, ins)}"
            )
        if spec.index_input is not None and spec.index_input in spec.carry.values():
            raise self.fail(
                f"{where}: index_input={spec.index_input!r} is also carried; the iteration"
                " number is the one input that is not carried"
            )
        for name in spec.inputs:
            if name not in ins:
                raise self.fail(
                    f"{where}: {name!r} is not an input of the body{did_you_mean(name, ins)}"
                )
            if name == spec.index_input:
                raise self.fail(
                    f"{where}: {name!r} is the index_input, which the loop sets itself; do"
                    " not pass it"
                )
        for name, info in ins.items():
            if info.is_required() and name not in spec.inputs and name != spec.index_input:
                raise self.fail(
                    f"{where}: the body's input {name!r} is required but iteration 1 gets no"
                    f" value (pass {name}=... to add_loop)"
                )
        if isinstance(body, _Recipe):
            for out in outs:
                if out not in body.output_wiring:
                    raise self.fail(
                        f"{where}: the body never sets its output {out!r} (use set_output)"
                    )

    def check_body_steps(self, spec: LoopSpec, where: str) -> None:
        """Refuse a body that scatters or holds a nested recipe or loop.

        Checked before the until output is traced through the body's steps,
        which assumes each of them is a plain step, so a loop nested in a
        loop gets this refusal rather than an internal error.
        """
        from shinobi.steps.recipe import LoopSpec as _LoopSpec
        from shinobi.steps.recipe import Recipe as _Recipe

        body = spec.body
        if spec.scatter or (spec.scatter is None and _scatter_of(body)):
            raise self.fail(f"{where}: the body scatters; a loop body may not contain scatter")
        if not isinstance(body, _Recipe):
            return
        for inner in body.steps:
            if isinstance(inner, _LoopSpec) or isinstance(inner.step, _Recipe):
                raise self.fail(
                    f"{where}: body step {inner.name!r} is a nested recipe or loop; a loop body"
                    " may contain only cabs and pysteps"
                )
            if inner.scatter or _scatter_of(inner.step):
                raise self.fail(
                    f"{where}: body step {inner.name!r} scatters; a loop body may not"
                    " contain scatter"
                )

    def check_until(self, spec: LoopSpec, where: str) -> None:
        """The until path must be an optional output where the tool may not write it.

        A cab's required path output that the tool did not create fails the
        step, so a required until output would fail every iteration that has
        not converged instead of letting the loop go on.
        """
        from shinobi.steps.types import fields_of

        body, field = spec.body, spec.until
        producer: Any = body
        if getattr(body, "kind", None) == "recipe":
            declared = fields_of(body.outputs_model).get(field)
            if declared is not None and declared.promised and declared.path_kind is not None:
                raise self.fail(_required_until(spec.until, f"recipe {body.name!r}", field, where))
            wired = body.output_wiring.get(field)
            if not isinstance(wired, OutputRef):
                return
            inner = next((s for s in body.steps if getattr(s, "name", None) == wired.step), None)
            if inner is None:
                return
            producer, field = inner.step, wired.field
        kind = getattr(producer, "kind", None)
        cab = producer if kind == "cab" else getattr(producer, "cab", None)
        # a pystep has no cab, but its return annotation declares its outputs alike
        declarer = cab if cab is not None else producer if kind == "python" else None
        if declarer is None or field not in _fields(declarer.outputs_model):
            return
        spec_of = fields_of(declarer.outputs_model)[field]
        dtype = cab.meta(field).dtype if cab is not None else None
        if spec_of.path_kind is None and dtype is None:
            raise self.fail(
                f"{where}: until={spec.until!r} is not a path output of {declarer.name!r}; the"
                " loop converges when a file exists, so until must name a File, Directory or MS"
                " output"
            )
        required = spec_of.promised if cab is not None else field in declarer.required_outputs()
        if required and spec_of.path_kind is not None:
            raise self.fail(_required_until(spec.until, repr(declarer.name), field, where))

    def unroll(self, spec: LoopSpec) -> list[dict[str, Any]]:
        """The loop as plain step entries, iteration by iteration."""
        body = spec.body
        is_recipe = getattr(body, "kind", None) == "recipe"
        carry_from = {inp: out for out, inp in spec.carry.items()}

        body_defaults = _defaults(body.inputs_model) if is_recipe else {}

        def in_value(name: str, k: int) -> Any:
            if name == spec.index_input:
                return k
            if k > 1 and name in carry_from:
                return out_value(carry_from[name], k - 1)
            # a body recipe's own default, as a nested recipe's inputs model gives it
            return spec.inputs.get(name, body_defaults.get(name, _MISSING))

        def out_value(name: str, k: int) -> Any:
            if not is_recipe:
                return OutputRef(f"{spec.name}.{k}", name)
            wired = body.output_wiring[name]
            if isinstance(wired, OutputRef):
                return OutputRef(f"{spec.name}.{k}.{wired.step}", wired.field)
            if isinstance(wired, InputRef):
                return in_value(wired.field, k)
            return wired

        self.loops[spec.name] = spec
        self.loop_outputs[spec.name] = lambda f: out_value(f, spec.max_iter)
        entries: list[dict[str, Any]] = []
        # Every step of a cycle waits for the whole cycle before it: whether
        # the loop has converged is decided when a cycle's first step is
        # ready, and any step of the cycle before may be the one that writes
        # the until file (a path the loop is handed has no producer to wait on).
        cycle: list[str] = []
        for k in range(1, spec.max_iter + 1):
            guard = out_value(spec.until, k - 1) if k > 1 else None
            before, cycle = cycle, []
            if not is_recipe:
                wiring = {}
                for name in _fields(body.inputs_model):
                    value = in_value(name, k)
                    if value is not _MISSING:
                        wiring[name] = value
                entries.append(
                    dict(
                        name=f"{spec.name}.{k}",
                        step=body,
                        wiring=wiring,
                        resources=spec.resources,
                        backend=spec.backend,
                        venv=spec.venv,
                        guard=guard,
                        previous=f"{spec.name}.{k - 1}" if k > 1 else None,
                        loop=spec.name,
                        iteration=k,
                    )
                )
                continue
            for inner in body.steps:
                wiring = {}
                for key, value in inner.wiring.items():
                    if isinstance(value, InputRef):
                        value = in_value(value.field, k)
                        if value is _MISSING:
                            continue
                    elif isinstance(value, OutputRef):
                        value = OutputRef(f"{spec.name}.{k}.{value.step}", value.field)
                    wiring[key] = value
                entries.append(
                    dict(
                        name=f"{spec.name}.{k}.{inner.name}",
                        step=inner.step,
                        wiring=wiring,
                        resources=inner.resources,
                        backend=inner.backend,
                        venv=inner.venv,
                        guard=guard,
                        previous=f"{spec.name}.{k - 1}.{inner.name}" if k > 1 else None,
                        after=before,
                        loop=spec.name,
                        iteration=k,
                    )
                )
                cycle.append(f"{spec.name}.{k}.{inner.name}")
        return entries

    # -- the graph -----------------------------------------------------------
    def build(self, path: str) -> Graph:
        from shinobi.steps.recipe import LoopSpec as _LoopSpec
        from shinobi.steps.recipe import StepRef as _StepRef

        recipe = self.recipe
        self.loop_outputs: dict[str, Any] = {}
        entries: list[dict[str, Any]] = []
        for item in recipe.steps:
            if isinstance(item, _StepRef):  # most items: one isinstance() each
                self.check_name("step", item.name)
                entries.append(
                    {
                        "name": item.name,
                        "step": item.step,
                        "wiring": dict(item.wiring),
                        "scatter": _scatter_of(item.step) if item.scatter is None else item.scatter,
                        "resources": item.resources,
                        "backend": item.backend,
                        "venv": item.venv,
                    }
                )
            elif isinstance(item, _LoopSpec):
                self.check_name("loop", item.name, "loop")
                self.check_loop(item)
                entries.extend(self.unroll(item))
            else:
                raise self.fail(f"steps contains {item!r}, which is not a StepRef")

        declared: dict[str, str] = {}
        for item in recipe.steps:
            what = "loop" if isinstance(item, _LoopSpec) else "step"
            name = getattr(item, "name", "")
            if name in declared and "loop" in (what, declared[name]):
                raise self.fail(
                    f"{what} {name!r}: the name is already used by a {declared[name]}; give"
                    " each step and loop a unique name"
                )
            declared[name] = what
        index: dict[str, int] = {}
        for i, entry in enumerate(entries):
            name = entry["name"]
            if name in index:
                unrolled = entry if entry.get("loop") else entries[index[name]]
                if unrolled.get("loop"):  # one of them is named by unrolling a loop
                    raise self.fail(
                        f"step {name!r}: the name is how ninja names iteration"
                        f" {unrolled['iteration']} of loop {unrolled['loop']!r}; give the step"
                        " another name"
                    )
                raise self.fail(
                    f"step {name!r}: the name is used twice (steps {index[name] + 1} and"
                    f" {i + 1}); give each step a unique name"
                )
            index[name] = i
        self.check_slice_names(entries, index)
        self.steps_by_name = {entry["name"]: entry["step"] for entry in entries}
        self.entries = entries  # a producer's scatter, for check_input_type

        recipe_inputs = _fields(recipe.inputs_model)
        nodes: list[Node] = []
        for i, entry in enumerate(entries):
            node = self.make_node(i, entry, index, recipe_inputs, path)
            nodes.append(node)
        self.check_nested_names(nodes)
        self.check_run_names(nodes)

        outputs: dict[str, Any] = {}
        recipe_outputs = _fields(recipe.outputs_model)
        for name, value in recipe.output_wiring.items():
            if name not in recipe_outputs:
                raise self.fail(
                    f"output {name!r}: the recipe's outputs_model has no such field"
                    f"{did_you_mean(name, recipe_outputs)}"
                )
            outputs[name], _ = self.check_value(value, f"output {name!r}", index, recipe_inputs)
            if type(outputs[name]) not in _PLAIN:  # a reference, or a container of them
                field = fields_of(recipe.outputs_model)[name]
                self.check_path_to_text(outputs[name], field, f"output {name!r}", "output")
                if type(outputs[name]) is OutputRef:
                    self.check_output_type(name, outputs[name], nodes[index[outputs[name].step]])
        for name, info in _fields(recipe.outputs_model).items():
            if info.is_required() and name not in outputs:
                raise self.fail(
                    f"output {name!r}: the outputs model requires it, but nothing sets it; wire"
                    f" it with set_output({name!r}, ...), or give it a default"
                )

        dependants: list[list[int]] = [[] for _ in nodes]
        for node in nodes:
            for d in node.deps:
                dependants[d].append(node.index)
            if isinstance(node.guard, OutputRef):
                nodes[index[node.guard.step]].until = node.guard.field
        handed: dict[str, Any] = {}
        for name, spec in self.loops.items():
            final = self.loop_outputs[name](spec.until)
            if isinstance(final, OutputRef) and final.step in index:
                nodes[index[final.step]].until = final.field
            elif not output_refs(final):
                handed[name] = final
        graph = Graph(
            recipe=recipe,
            nodes=nodes,
            index=index,
            outputs=outputs,
            dependants=dependants,
            handed_until=handed,
        )
        self.check_cycles(graph)
        return graph

    def translate(self, value: Any) -> Any:
        """A reference to a loop, rewritten to the loop's final iteration."""
        if isinstance(value, OutputRef) and value.step in self.loop_outputs:
            spec = self.loops[value.step]
            if value.field not in _fields(spec.body.outputs_model):
                outs = _fields(spec.body.outputs_model)
                raise RecipeGraphError(
                    f"{self.where}: loop {spec.name!r} has no output {value.field!r}"
                    f"{did_you_mean(value.field, outs)}"
                )
            return self.loop_outputs[value.step](value.field)
        if isinstance(value, list | tuple):
            return same_shape(value, [self.translate(v) for v in value])
        if isinstance(value, dict):
            return {k: self.translate(v) for k, v in value.items()}
        return value

    def check_value(
        self, value: Any, where: str, index: dict[str, int], recipe_inputs: dict[str, Any]
    ) -> tuple[Any, Sequence[OutputRef]]:
        """``value`` with loop references translated, and the step outputs it names.

        Every reference is checked first (inputs and steps exist), then every
        output it names (the step has it).
        """
        kind = type(value)
        if kind in _PLAIN:
            return value, ()
        half = None if kind is OutputRef else half_reference(value, index, self.loops)
        if half is not None:
            raise self.fail(f"{where}: {half}")
        value = self.translate(value)
        hidden = _ref_in_a_model(value)
        if hidden is not None:
            ref, model = hidden
            raise self.fail(
                f"{where}: {_ref_words(ref)} sits inside an instance of {model}, where ninja does"
                " not follow a reference (the step would get the reference itself, before"
                " what it names is made); give the model as a dict of its fields, or the"
                " value as an input of its own"
            )
        refs = refs_in(value)
        for ref in refs:
            if self.foreign(ref):
                raise self.fail(_foreign(where, ref, self.recipe.name))
            if isinstance(ref, InputRef):
                if ref.field not in recipe_inputs:
                    raise self.fail(
                        f"{where}: InputRef names {ref.field!r}, which the recipe's"
                        f" inputs_model does not have{did_you_mean(ref.field, recipe_inputs)}"
                    )
                continue
            if ref.step not in index:
                raise self.fail(
                    f"{where}: OutputRef names step {ref.step!r}, which does not exist"
                    f"{did_you_mean(ref.step, list(index) + list(self.loops))}"
                )
        produced = [ref for ref in refs if isinstance(ref, OutputRef)]
        for ref in produced:
            self.check_output_field(ref, where)
        return value, produced

    def make_node(
        self,
        i: int,
        entry: dict[str, Any],
        index: dict[str, int],
        recipe_inputs: dict[str, Any],
        path: str,
    ) -> Node:
        name, step = entry["name"], entry["step"]
        facts = self.facts_of(name, step)
        kind, inputs = facts.kind, facts.inputs
        wiring: dict[str, Any] = {}
        deps: set[int] = set()
        scatter = entry.get("scatter", ())
        for key, value in entry["wiring"].items():
            if key not in inputs:
                raise self.fail(
                    f"step {name!r}, input {key!r}: {step.name!r} has no input {key!r}"
                    f"{did_you_mean(key, inputs)}"
                )
            if type(value) in _PLAIN:  # most values: nothing to check or translate
                wiring[key] = value
                continue
            if self.is_usual_ref(value, index):
                wiring[key] = wired = value
                deps.add(index[value.step])
            else:
                where = f"step {name!r}, input {key!r}"
                wiring[key], produced = self.check_value(value, where, index, recipe_inputs)
                deps.update(index[ref.step] for ref in produced)
                wired = wiring[key]
                if type(wired) in _PLAIN:  # a loop output that is a plain value
                    continue
            if type(wired) in _REF_KINDS:
                self.check_input_type(name, key, wired, step, scatter, entry, index)
            if key in facts.text_checked:
                where = f"step {name!r}, input {key!r}"
                self.check_path_to_text(wired, fields_of(step.inputs_model)[key], where)
        if facts.unfilled is not None:
            raise self.fail(f"step {name!r}: {step.unfilled_message(facts.unfilled)}")
        guard = entry.get("guard")
        if guard is not None:
            guard = self.translate(guard)
            deps.update(index[ref.step] for ref in output_refs(guard))
        for field_name in scatter:
            if field_name not in inputs:
                raise self.fail(
                    f"step {name!r}: scatter names {field_name!r}, which is not an input of"
                    f" {step.name!r}{did_you_mean(field_name, inputs)}"
                )
            if field_name not in wiring:
                raise self.fail(
                    f"step {name!r}: scatter field {field_name!r} is not wired to a list"
                )
        resources = entry.get("resources") or facts.resources
        if resources is not None and not _is_resources(resources):
            raise self.fail(
                f"step {name!r}: resources must be Resources(cpus=..., memory=...), not"
                f" {type(resources).__name__} {resources!r}"
            )
        if resources is not facts.resources and _is_resources(facts.resources):
            resources = resources.over(facts.resources)  # field by field: add_step's win
        subgraph = None
        if kind == "recipe":
            if resources is not None:
                raise self.fail(
                    f"step {name!r}: resources are declared on a nested recipe; declare them"
                    " on the steps inside it that do the work (a recipe is not a unit of"
                    " execution)"
                )
            self.check_nested_settings(name, entry)
            if any(step is outer for outer in self.enclosing):
                chain = " -> ".join(repr(outer.name) for outer in (*self.enclosing, step))
                raise self.fail(
                    f"step {name!r}: it is the recipe {step.name!r}, which contains it"
                    f" ({chain}); a recipe cannot contain itself: nest a different recipe,"
                    " or repeat the steps with a loop"
                )
            subgraph = _Builder(step, f"{path}.{name}", self.enclosing).build(f"{path}.{name}")
        backend, venv = entry.get("backend"), entry.get("venv")
        if backend is not None or venv is not None or not facts.settings_ok:
            self.check_settings(name, backend, venv, facts)
        previous = entry.get("previous")
        if previous is not None:
            deps.add(index[previous])
        after = entry.get("after")
        if after:
            deps.update(index[before] for before in after)
        return Node(
            index=i,
            name=name,
            step=step,
            wiring=wiring,
            scatter=tuple(scatter),
            resources=resources,
            backend=backend or facts.backend,
            venv=venv or facts.venv,
            deps=tuple(sorted(deps)),
            guard=guard,
            previous=previous,
            loop=entry.get("loop"),
            iteration=entry.get("iteration"),
            subgraph=subgraph,
        )

    def facts_of(self, name: str, step: Any) -> _StepFacts:
        """``step``'s facts (see :class:`_StepFacts`); refused here if it is no step."""
        facts = self.facts.get(id(step))
        if facts is not None:
            return facts
        kind = getattr(step, "kind", None)
        if isinstance(step, type):  # add_step("s", Cab, ...): the class, not one made of it
            raise self.fail(
                f"step {name!r}: {step.__name__} is the class itself; give the step one made"
                f" of it ({step.__name__}(...))"
            )
        if kind not in _STEP_KINDS:
            raise self.fail(
                f"step {name!r}: {type(step).__name__} is not a step (use a Cab, a Recipe,"
                " an @step function or a @pystep)"
            )
        facts = self.facts[id(step)] = _StepFacts(step, kind)
        return facts

    def is_usual_ref(self, value: Any, index: dict[str, int]) -> bool:
        """Whether ``value`` is a plain reference to an output that a step of this
        recipe has: what most wiring is, accepted without the walk and the
        checks of :meth:`check_value`, which takes any other value (and any
        reference it would refuse, to say why)."""
        if type(value) is not OutputRef:
            return False
        step = value.step
        if step in self.loop_outputs or step not in index:
            return False
        if self.foreign(value):
            return False
        return value.field in _fields(self.steps_by_name[step].outputs_model)

    def foreign(self, ref: InputRef | OutputRef) -> bool:
        """Whether a proxy of another recipe made ``ref``: another recipe object (two
        recipes a factory made alike; a copy keeps its original's token, and so does
        a recipe renamed after it was wired), or, for a reference with no token, one
        of another name."""
        if ref.recipe is None:
            return False
        if ref.owner is not None:
            return ref.owner != getattr(self.recipe, "token", None)
        return ref.recipe != self.recipe.name

    def check_settings(self, name: str, backend: Any, venv: Any, facts: _StepFacts) -> None:
        """A step's ``backend=``/``venv=``, given to it or declared by its step, must
        be text, and a venv not blank."""
        for setting, given, own in (
            ("backend", backend, facts.backend),
            ("venv", venv, facts.venv),
        ):
            for value in (given, own):
                if value is not None and not isinstance(value, str):
                    raise self.fail(_not_a_name(name, setting, value))
        for value in (venv, facts.venv):
            if isinstance(value, str) and not value.strip():
                raise self.fail(
                    f"step {name!r}: venv= is empty; give the virtualenv's directory, or leave"
                    " venv= out to use backend.venv"
                )

    def check_nested_settings(self, name: str, entry: dict[str, Any]) -> None:
        """Refuse ``backend=``/``venv=`` given to a nested recipe.

        A recipe is not a unit of execution: its steps run each on its own
        backend (their ``backend=``, else ``--backend`` or the configuration),
        so one given to the recipe would be silently ignored, and a
        sub-pipeline asked to run in a container would run on the host.
        """
        for setting, instead in _NESTED_SETTINGS.items():
            if entry.get(setting) is not None:
                raise self.fail(
                    f"step {name!r}: {setting}= is given to a nested recipe, whose steps would"
                    f" not take it; set {setting}= on the steps inside the nested recipe, or"
                    f" {instead}"
                )

    def check_path_to_text(
        self, value: Any, spec: FieldSpec, where: str, role: str = "input"
    ) -> None:
        """A step's path output wired to a ``str`` field (an item of a ``list[str]``, a
        value of a ``dict[str, str]``), an input or the recipe's output: refused
        where it is wired.

        pydantic refuses the path only when its turn comes, after the steps
        before it ran; and taken as text it would be neither made visible to a
        container nor keyed by its content in the step cache.
        """
        if spec.text_values:  # a value may be a list of text: its items count
            values = list(value.values()) if isinstance(value, dict) else []
            nested = (list, tuple, set, frozenset)
            refs = [v for item in values for v in (item if isinstance(item, nested) else [item])]
        elif spec.is_text:
            # a list[str] is wired item by item, or whole (to a list[File] output or input)
            refs = list(value) if spec.is_list and isinstance(value, list) else [value]
        else:
            return
        for ref in refs:
            path = self.path_named(ref)
            if path is None:
                continue
            if spec.text_values:  # a mapping's values are never paths to shinobi
                raise self.fail(
                    f"{where}: is declared a mapping to str but wired to {path}; give the"
                    f" path an {role} of its own declared File (or Path), which the backend"
                    " makes visible and whose content keys the step cache"
                )
            typed = "list[str]" if spec.is_list else "str"
            raise self.fail(
                f"{where}: is declared {typed} but wired to {path}; declare it a File (or"
                " Path), which the backend makes visible and whose content keys the step cache"
            )

    def check_output_type(self, name: str, ref: OutputRef, producer: Node) -> None:
        """The recipe's output ``name``, wired to ``ref``, must be able to take what that
        step output is declared to make: refused where it is wired otherwise.

        The run validates the recipe's outputs only once every step has run, so
        an ``int`` handed to a ``str`` (a File to an ``int``, a list to one
        value) failed the run then, with no step to blame; a Directory to a
        File is a clash of kinds on disk. Only such certain clashes are refused
        (see :func:`_never_takes`): an ``int`` into a ``float``, into
        ``int | None`` or into ``Any`` stays accepted. A scattered step makes a
        list of what it declares.
        """
        made = _declared_as(producer.step.outputs_model, ref.field, bool(producer.scatter))
        model: Any = self.recipe.outputs_model  # a class: hashable, as the cache needs
        taken = _declared_as(model, name, False)
        if made is None or taken is None or not _never_takes(made, taken):
            return
        raise self.fail(
            f"output {name!r}: is declared {taken.shown} but wired to the output {ref.field!r}"
            f" of step {ref.step!r}, declared {made.shown}, which it can never take; declare"
            " the two the same type, or wire the output to a step output of its type"
        )

    def check_input_type(
        self,
        name: str,
        key: str,
        ref: OutputRef | InputRef,
        step: Any,
        scatter: Sequence[str],
        entry: dict[str, Any],
        index: dict[str, int],
    ) -> None:
        """Step ``name``'s input ``key``, wired to ``ref``, must be able to take what that
        step output or recipe input is declared to hold: refused where it is wired
        otherwise, by the rule of :meth:`check_output_type`.

        The run validates a step's inputs only when its turn comes, so an ``int``
        handed to a ``str`` failed that step, maybe hours into the run, though
        both types were known before it. A scattered producer's outputs are
        gathered into a list; an input the step is scattered over takes a list,
        one item of it per slice (one value wired to it is left to the scatter's
        own check, which says it is no list). One cached look-up per wired
        input: large recipes wire thousands.
        """
        if type(ref) is OutputRef:
            made_model = self.steps_by_name[ref.step].outputs_model
            gathered = bool(self.entries[index[ref.step]].get("scatter"))
        else:
            made_model, gathered = self.recipe.inputs_model, False
        sliced = key in scatter
        single = sliced and _one_value(made_model, ref.field, gathered)
        if not single and not _clashes(
            made_model, ref.field, gathered, step.inputs_model, key, sliced
        ):
            return
        inputs, wired = _fields(step.inputs_model), entry["wiring"]
        if any(f not in inputs or f not in wired for f in scatter):
            return  # a scatter named wrong: make_node says so, and this may be no clash
        made = _declared_as(made_model, ref.field, gathered)
        declared = _declared_as(step.inputs_model, key, False)
        source = (
            f"the output {ref.field!r} of step {ref.step!r}"
            if type(ref) is OutputRef
            else f"the recipe's input {ref.field!r}"
        )
        assert made is not None  # as _one_value or _clashes found it
        if single:  # the run would say "must be a list" only once the producer ran
            raise self.fail(
                f"step {name!r}, input {key!r}: is scattered over {source}, declared"
                f" {made.shown}: one value, no list to give each slice an item of; scatter"
                " over a list, or do not scatter over this input"
            )
        assert declared is not None  # as _clashes found it
        if sliced:
            raise self.fail(
                f"step {name!r}, input {key!r}: is declared {declared.shown} and scattered"
                f" over {source}, declared {made.shown}: each slice gets one item of that"
                " list, which it can never take; declare the input as the list's item type,"
                " or do not scatter over it"
            )
        raise self.fail(
            f"step {name!r}, input {key!r}: is declared {declared.shown} but wired to {source},"
            f" declared {made.shown}, which it can never take; declare the two the same type,"
            " or wire the input to a value of its type"
        )

    def path_named(self, ref: Any) -> str | None:
        """What ``ref`` names, said for a message, when it is a path: a step's path
        output, or a path input of the recipe (``src: File``); else None."""
        if isinstance(ref, InputRef):
            given = fields_of(self.recipe.inputs_model).get(ref.field)
            if given is None or given.path_kind is None:
                return None
            return f"the recipe's path input {ref.field!r}"
        if not isinstance(ref, OutputRef) or ref.step not in self.steps_by_name:
            return None
        made = fields_of(self.steps_by_name[ref.step].outputs_model).get(ref.field)
        if made is None or made.path_kind is None:
            return None
        return f"the path output {ref.field!r} of step {ref.step!r}"

    def check_output_field(self, ref: OutputRef, where: str) -> None:
        producer = self.steps_by_name[ref.step]
        outs = _fields(producer.outputs_model)
        if ref.field not in outs:
            raise self.fail(
                f"{where}: step {ref.step!r} has no output {ref.field!r}"
                f"{did_you_mean(ref.field, outs)}"
            )

    def check_cycles(self, graph: Graph) -> None:
        order = graph.topological_order()
        if len(order) == len(graph.nodes):
            return
        remaining = set(range(len(graph.nodes))) - set(order)
        # Walk back along dependencies inside the remainder until a node repeats.
        start = min(remaining)
        seen: dict[int, int] = {}
        path: list[int] = []
        current = start
        while current not in seen:
            seen[current] = len(path)
            path.append(current)
            current = next(d for d in graph.nodes[current].deps if d in remaining)
        cycle = path[seen[current] :]
        cycle.reverse()
        first = cycle.index(min(cycle))  # start at the earliest-declared step, for stable output
        cycle = cycle[first:] + cycle[:first]
        names = [graph.nodes[i].name for i in cycle]
        raise self.fail(
            f"step {names[0]!r}: the steps form a cycle: {' -> '.join([*names, names[0]])}"
            " (a step cannot depend, even indirectly, on its own output)"
        )


#: How a slice of a scattered step is named: ``STEP[N]``.
_SLICE_NAME = re.compile(r"(.*)\[(\d+)\]")


#: What a nested recipe's ``backend=``/``venv=`` are refused for: the run-wide setting
#: that chooses it instead.
_NESTED_SETTINGS = {
    "backend": "choose the backend for the whole run with --backend or backend.default",
    "venv": "set backend.venv for the whole run",
}


@dataclass(frozen=True, slots=True)
class _Declared:
    """What a field is declared to hold, reduced to what :func:`_never_takes` compares:
    ``kind`` a plain scalar ("str", "int", "float", "bool") or a path's kind on
    disk ("file", "dir", "any"), None for anything else (Any, a union, an enum,
    a model...); ``is_list`` a list (or tuple, set) of it; ``shown`` the type
    in a model's words, for a message."""

    kind: str | None
    is_list: bool
    shown: str


#: The plain scalars :func:`_never_takes` knows, by exact type (``bool`` is no ``int``
#: here, an ``IntEnum`` is neither).
_SCALARS = {str: "str", int: "int", float: "float", bool: "bool"}
#: Pairs (made, taken) pydantic refuses whatever the value, as it validates the recipe's
#: outputs (lax): a number is never text, a path never a number nor a number a path.
#: A path into ``str`` is refused by :meth:`_Builder.check_path_to_text`, with its own
#: advice. A Directory (or an MS) into a File, or a File into a Directory, is the clash
#: of kinds a cab's passthrough is refused for (:func:`shinobi.steps.types.passthrough_problem`):
#: the run fails a required one as "not there" or of the wrong kind.
_NEVER = frozenset(
    {(number, "str") for number in ("int", "float", "bool")}
    | {(path, number) for path in ("file", "dir", "any") for number in ("int", "float", "bool")}
    | {(number, path) for path in ("file", "dir", "any") for number in ("int", "float", "bool")}
    | {("file", "dir"), ("dir", "file")}
)


@cache
def _declared_as(model: Any, name: str, scattered: bool) -> _Declared | None:
    """What ``model``'s field ``name`` holds (a list of it when ``scattered``: a
    scattered step's outputs are gathered), or None when its validation may take
    what its type alone refuses: a validator of the field's or the model's, or
    ``coerce_numbers_to_str``. Cached per model class, as :func:`_model_fields` is."""
    info = _fields(model).get(name)
    if info is None or _validated_freely(model):
        return None
    core, metadata, is_list = unwrap_annotation(info.annotation, list(info.metadata))
    if any(
        not isinstance(m, PathType) and type(m).__module__ != "annotated_types" for m in metadata
    ):
        return None  # a validator, coerce_numbers_to_str=...: only constraints narrow
    spec = fields_of(model)[name]
    if spec.path_kind is not None:
        kind: str | None = on_disk_kind(spec.path_kind, None)
        shown = KIND_NAMES[spec.path_kind]
    else:
        kind = _SCALARS.get(core) if isinstance(core, type) else None
        shown = getattr(core, "__name__", None) or str(core)
    shown = f"list[{shown}]" if is_list else shown
    if scattered:
        if is_list:  # a list of lists: no plain scalar
            return _Declared(None, True, f"list[{shown}] (gathered)")
        return _Declared(kind, True, f"list[{shown}] (gathered from its slices)")
    return _Declared(kind, is_list, shown)


@cache
def _one_value(made_model: Any, made: str, gathered: bool) -> bool:
    """Whether field ``made`` of ``made_model`` (gathered into a list when
    ``gathered``) is declared one value of a known kind, which no scatter can
    take: a ``str``, a number, a path. What the declaration leaves open (``Any``,
    a union, a model, a validator of its own) may be a list."""
    made_as = _declared_as(made_model, made, gathered)
    return made_as is not None and not made_as.is_list and made_as.kind is not None


@cache
def _clashes(
    made_model: Any, made: str, gathered: bool, taken_model: Any, taken: str, sliced: bool
) -> bool:
    """Whether field ``taken`` of ``taken_model`` (a list of it, one item per slice,
    when ``sliced``) can never take field ``made`` of ``made_model`` (gathered into
    a list when ``gathered``): :func:`_never_takes` of their declarations, cached
    per pair of model classes and fields, as a large recipe wires the same pair
    over and over."""
    made_as = _declared_as(made_model, made, gathered)
    if made_as is None or (sliced and not made_as.is_list):
        return False  # one value scattered over: _one_value, or the scatter's own check
    if sliced:  # each slice takes one item of the list: the field must take the item
        item = _Declared(made_as.kind, False, made_as.shown)
        if gathered:  # a scattered producer's own declaration is one slice's item
            item = _declared_as(made_model, made, False) or item
        taken_as = _declared_as(taken_model, taken, False)
        return taken_as is not None and item.kind is not None and _never_takes(item, taken_as)
    taken_as = _declared_as(taken_model, taken, sliced)
    return taken_as is not None and _never_takes(made_as, taken_as)


def _validated_freely(model: Any) -> bool:
    """Whether ``model`` has validators of its own, or coerces numbers to text: what
    it takes is then more than its fields' types say."""
    config = getattr(model, "model_config", {})
    decorators = getattr(model, "__pydantic_decorators__", None)
    own = decorators is not None and bool(
        decorators.validators or decorators.field_validators or decorators.model_validators
    )
    return own or bool(config.get("coerce_numbers_to_str"))


def _never_takes(made: _Declared, taken: _Declared) -> bool:
    """Whether no value declared ``made`` can pass as one declared ``taken``: a list
    for a plain value or a plain value for a list, or a pair in :data:`_NEVER`.
    What the declarations leave open (``Any``, a union, a model) is taken."""
    if made.is_list != taken.is_list:
        plain = taken if made.is_list else made  # the side that is one value
        return plain.kind is not None
    return (made.kind, taken.kind) in _NEVER


def _required_until(until: str, declarer: str, field: str, where: str) -> str:
    """A loop's until output that every iteration must make: none could go on."""
    return (
        f"{where}: until={until!r} is a required output of {declarer} ({field!r}), so every"
        " iteration that does not write it fails; declare it optional"
        f" ({field}: File | None = None): its existence is the convergence test"
    )


def _not_a_name(step: str, setting: str, value: Any) -> str:
    """Why a step's ``backend=``/``venv=`` that is not text is refused, and what to do.

    Both are fixed when the recipe is built; wiring one from a recipe input
    (``backend=r.inputs.backend``) hands the step a reference, not a name.
    """
    what = "a backend's name, such as 'native' or 'docker'"
    instead = "leave it out and give `ninja run --backend NAME`"
    if setting == "venv":
        what, instead = "a virtualenv's directory", "leave it out and set backend.venv"
    shown = f"the reference {value!r}" if isinstance(value, _REFS) else repr(value)
    return (
        f"step {step!r}: {setting}= must be {what}, as text when the recipe is built,"
        f" not {shown} (to choose it per run, {instead})"
    )


def _foreign(where: str, ref: InputRef | OutputRef, recipe: str) -> str:
    """A proxy of another recipe wired here: it would silently be read as this one's."""
    if isinstance(ref, InputRef):
        written, mine = f"{ref.recipe}.inputs.{ref.field}", f".inputs.{ref.field}"
    else:
        written, mine = f"{ref.recipe}.outputs.{ref.step}.{ref.field}", ".outputs"
    other = "another recipe named so" if ref.recipe == recipe else f"recipe {ref.recipe!r}"
    return (
        f"{where}: it is wired to {written}, a reference of {other}, not of this"
        f" {recipe!r}; wire it with the proxies of recipe {recipe!r} itself ({mine}), or"
        f" nest {ref.recipe!r} as a step"
    )


def _is_resources(value: Any) -> bool:
    from shinobi.resources import Resources as _Resources  # only for steps that declare some

    return isinstance(value, _Resources)


#: A slice index in a step's run name, as :meth:`_Builder.check_run_names` groups them.
_ANY_SLICE = re.compile(r"\[\d+\]")


#: One step's place in a run's names: (its name, whether it is scattered) for it
#: and each recipe around it, outermost first.
_Segments = tuple[tuple[str, bool], ...]


def _run_names(
    nodes: list[Node], prefix: str = "", around: _Segments = ()
) -> Iterator[tuple[str, _Segments]]:
    """(a name its runs take, where the step is) for every step in ``nodes`` and
    below: a scattered step's as ``STEP[0]``, nested steps' under their parent's."""
    for node in nodes:
        scattered = bool(node.scatter)
        shown = f"{prefix}{node.name}[0]" if scattered else f"{prefix}{node.name}"
        segments = (*around, (node.name, scattered))
        yield shown, segments
        if node.subgraph is not None:
            yield from _run_names(node.subgraph.nodes, f"{shown}.", segments)


def _any_scattered(nodes: list[Node]) -> bool:
    """Whether a step in ``nodes``, or in a recipe nested in them, is scattered."""
    return any(
        node.scatter or (node.subgraph is not None and _any_scattered(node.subgraph.nodes))
        for node in nodes
    )


def _pattern(segments: _Segments) -> str | None:
    """The pattern every name of the step's runs matches, or None when a scatter
    numbers none of them (its one name is its own)."""
    if not any(scattered for _, scattered in segments):
        return None
    return r"\.".join(
        re.escape(name) + (r"\[\d+\]" if scattered else "") for name, scattered in segments
    )


def _numbered(segments: _Segments) -> str:
    """A step's run names as a reader takes them: ``s[N].e``."""
    return ".".join(f"{name}[N]" if scattered else name for name, scattered in segments)


def _qualified_names(graph: Graph) -> list[str]:
    """Every step name in ``graph``, nested ones as ``PARENT.STEP``."""
    names = []
    for node in graph.nodes:
        names.append(node.name)
        if node.subgraph is not None:
            names += [f"{node.name}.{inner}" for inner in _qualified_names(node.subgraph)]
    return names


def build_graph(recipe: Recipe) -> Graph:
    """Validate ``recipe`` and return its graph; raises :class:`RecipeGraphError`."""
    if getattr(recipe, "kind", None) != "recipe" or isinstance(recipe, type):
        raise TypeError(
            f"build_graph takes a Recipe, not {type(recipe).__name__} {recipe!r:.60}; a cab or"
            " a pystep becomes one with shinobi.runner.as_recipe(step)"
        )
    if getattr(recipe, "resources", None) is not None:  # refused when nested too
        raise RecipeGraphError(
            f"recipe {recipe.name!r}: resources are declared on the recipe, which would"
            " ignore them; declare them on the steps inside it that do the work (a recipe is"
            " not a unit of execution)"
        )
    # A graph is a few long-lived objects a step: the collector's passes would
    # walk them again and again while they are made (shinobi.collector_paused).
    with collector_paused():
        return _Builder(recipe, recipe.name).build(recipe.name)
