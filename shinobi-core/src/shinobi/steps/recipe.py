"""Recipes: steps wired into a graph. A Recipe is itself a step of a larger one."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shinobi.errors import RecipeGraphError
from shinobi.steps.refs import InputRef, OutputRef, field_names

if TYPE_CHECKING:
    from pydantic import BaseModel

    from shinobi.resources import Resources
    from shinobi.steps.cab import Cab
    from shinobi.steps.functions import FunctionStep

__all__ = [
    "LoopHandle",
    "LoopSpec",
    "Recipe",
    "RecipeNameError",
    "StepRef",
    "half_reference",
    "name_problem",
]

#: What a step or recipe name may not hold: NUL, line breaks and the other C0
#: controls, DEL, and the C1 controls (a terminal reads ``\x9b`` as ESC ``[``).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

#: Nor what shows a name other than it is: bidirectional overrides, embeddings,
#: isolates and marks (a name that reads backwards, or reorders the line it is
#: in), and zero-width characters (two names that look alike and are not).
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def name_problem(name: object) -> str | None:
    """What makes ``name`` unusable as a step, loop or recipe name, or None.

    A step's name becomes its log file's name and a part of its node's path,
    its job's script name when offloaded, and a line of the run's display:
    an empty or all-dots name makes a hidden or relative file name (``.out``,
    ``..out``), a ``/`` a path into another folder, and a control character
    (NUL, a line break) a name no file, terminal line or batch script can hold;
    an invisible one (a bidi override, a zero-width space) shows a name other
    than it is.
    A recipe's name is a line of ``ninja runs`` and of the run's display, and
    the graph's name in ``ninja graph``: one rule for all of them.
    """
    if type(name) is str and name.isprintable() and "/" not in name and name.strip("."):
        return None  # the usual name, told in C (this runs for every step)
    if not isinstance(name, str):
        return f"is {type(name).__name__} {name!r}, not a string"
    if not name:
        return "is empty"
    if not name.strip("."):
        return "is only dots"
    if "/" in name:
        return 'holds "/"'
    bad = _CONTROL.search(name)
    if bad is not None:
        return f"holds the control character {bad.group()!r}"
    hidden = _INVISIBLE.search(name)
    if hidden is not None:
        return f"holds the invisible character {hidden.group()!r}"
    return None


class RecipeNameError(RecipeGraphError, ValueError):
    """A recipe name refused where the recipe is made (see :func:`name_problem`).

    A graph error, so ``ninja`` prints it as one line wherever the recipe is
    made (a cab run alone is wrapped in a recipe of its name); a ValueError
    too, as every other mistake in a ``Recipe(...)`` call is.
    """


@dataclass(slots=True)
class StepRef:
    """One step of a recipe: a name, what runs, and where its inputs come from.

    ``wiring`` maps the step's input fields to an :class:`InputRef`, an
    :class:`OutputRef` or a literal value. ``scatter`` names inputs that are
    lists at recipe level and fan the step out, one slice per element; None
    (not given) leaves it to the step's own default (``@shinobi.step(...,
    scatter=)``), which ``scatter=[]`` overrides.
    """

    name: str
    step: Any
    wiring: dict[str, Any] = field(default_factory=dict)
    scatter: tuple[str, ...] | None = None
    resources: Resources | None = None
    backend: str | None = None
    venv: str | None = None

    def __post_init__(self) -> None:
        if self.scatter is not None:
            self.scatter = field_names(self.scatter, f"step {self.name!r}: scatter")


@dataclass(slots=True)
class LoopSpec:
    """A declared loop, unrolled into ordinary steps by build_graph."""

    name: str
    body: Any
    max_iter: int
    until: str
    carry: dict[str, str]
    index_input: str | None
    inputs: dict[str, Any]
    #: what a StepRef body said for itself (add_step's scatter=, resources=,
    #: backend=, venv=): each iteration runs as it said
    scatter: tuple[str, ...] | None = None
    resources: Resources | None = None
    backend: str | None = None
    venv: str | None = None


class _InputsProxy:
    """``recipe.inputs.X`` -> ``InputRef("X")``, marked as the recipe's."""

    __slots__ = ("_owner", "_recipe")

    def __init__(self, recipe: str, owner: int | None = None) -> None:
        self._recipe = recipe
        self._owner = owner

    def __getattr__(self, name: str) -> InputRef:
        if name.startswith("__"):
            raise AttributeError(name)
        return InputRef(field=name, recipe=self._recipe, owner=self._owner)


class _StepOutputs:
    __slots__ = ("_owner", "_recipe", "_step")

    def __init__(self, recipe: str | None, step: str, owner: int | None = None) -> None:
        self._recipe = recipe
        self._step = step
        self._owner = owner

    def __getattr__(self, name: str) -> OutputRef:
        if name.startswith("__"):
            raise AttributeError(name)
        return OutputRef(step=self._step, field=name, recipe=self._recipe, owner=self._owner)


class _OutputsProxy:
    """``recipe.outputs.STEP.FIELD`` -> ``OutputRef("STEP", "FIELD")``, marked as the recipe's."""

    __slots__ = ("_owner", "_recipe")

    def __init__(self, recipe: str, owner: int | None = None) -> None:
        self._recipe = recipe
        self._owner = owner

    def __getattr__(self, name: str) -> _StepOutputs:
        if name.startswith("__"):
            raise AttributeError(name)
        return _StepOutputs(self._recipe, name, self._owner)

    def __getitem__(self, name: str) -> _StepOutputs:
        return _StepOutputs(self._recipe, name, self._owner)


def _refuse_keyword_inputs(recipe: str, name: str, step: Any, *keywords: Any) -> None:
    """Refuse an ``add_step`` keyword given for a step that has an input of that name."""
    fields = getattr(getattr(step, "inputs_model", None), "model_fields", {})
    given = zip(("scatter", "resources", "backend", "venv"), keywords, strict=True)
    for keyword, value in given:
        if value is not None and keyword in fields:
            raise ValueError(
                f"recipe {recipe!r}, step {name!r}: {keyword}= is add_step's own, but the step"
                f" has an input {keyword!r} too, which cannot be wired here: wire it with"
                f" recipe.steps.append(StepRef({name!r}, step, {{{keyword!r}: ...}}))"
            )


def half_reference(value: Any, *steps: Collection[str]) -> str | None:
    """What is wrong with ``value`` when it holds a proxy instead of a reference.

    ``recipe.outputs.image`` (the step, its output not named) or
    ``recipe.inputs`` would otherwise reach validation as an object, and the
    error would show its repr rather than the fix. ``steps``: collections of
    the names a step may have here (looked up, never copied: this runs for
    every wiring of every step), to say so when the one named is in none.
    """
    if isinstance(value, _StepOutputs):
        name = value._step
        if steps and not any(name in names for names in steps):
            from shinobi.errors import did_you_mean

            known = [known for names in steps for known in names]
            return f"it names step {name!r}, which does not exist{did_you_mean(name, known)}"
        return (
            f"it names step {name!r} but none of its outputs: write"
            f" .outputs.{name}.FIELD (the output's name)"
        )
    if isinstance(value, _OutputsProxy):
        return "it is .outputs itself: write .outputs.STEP.FIELD"
    if isinstance(value, _InputsProxy):
        return "it is .inputs itself: write .inputs.FIELD (the recipe input's name)"
    if isinstance(value, list | tuple):
        return next((said for v in value if (said := half_reference(v, *steps))), None)
    if isinstance(value, dict):
        return next((said for v in value.values() if (said := half_reference(v, *steps))), None)
    return None


class LoopHandle:
    """What :meth:`Recipe.add_loop` returns: ``.outputs.X`` is the final iteration's X."""

    def __init__(self, spec: LoopSpec, recipe: str | None = None, owner: int | None = None) -> None:
        self.spec = spec
        self.outputs = _StepOutputs(recipe, spec.name, owner)

    @property
    def name(self) -> str:
        return self.spec.name


class Recipe:
    """A pipeline: steps, the wiring between them, and the recipe's own inputs and outputs.

    Nothing is validated while a recipe is being built, so steps may refer to
    steps added later; :func:`shinobi.graph.build_graph` checks everything
    before a run or a dry run.
    """

    kind = "recipe"

    def __init__(
        self,
        name: str,
        inputs_model: type[BaseModel] | None = None,
        outputs_model: type[BaseModel] | None = None,
        steps: Iterable[StepRef] | None = None,
        output_wiring: Mapping[str, Any] | None = None,
        max_workers: int | None = None,
        resources: Resources | None = None,
        description: str | None = None,
    ) -> None:
        from shinobi.steps.models import step_model

        problem = name_problem(name)
        if problem is not None:
            raise RecipeNameError(
                f"recipe {name!r}: the name {problem}; give the recipe a name such as"
                " 'calibrate' (not empty, not only dots, no '/', no control or invisible"
                " characters)"
            )
        self.name = name
        owner = f"recipe {name!r}"
        self.inputs_model = step_model(inputs_model, owner, name, "inputs")
        self.outputs_model = step_model(outputs_model, owner, name, "outputs")
        self.steps: list[StepRef | LoopSpec] = list(steps or [])
        self.output_wiring: dict[str, Any] = dict(output_wiring or {})
        self.max_workers = max_workers
        self.resources = resources
        self.description = description
        # which recipe a proxy's reference belongs to: not id(self), which a copy
        # (copy.deepcopy, a process pool's pickle) does not keep, so a copy's own
        # wiring was refused as another recipe's
        self.token = int.from_bytes(os.urandom(8), "big")
        self.inputs = _InputsProxy(name, self.token)
        self.outputs = _OutputsProxy(name, self.token)

    @property
    def max_workers(self) -> int | None:
        """Steps of this recipe that may run at once; None falls back to the configuration."""
        return self._max_workers

    @max_workers.setter
    def max_workers(self, value: int | None) -> None:
        # checked on every assignment, not only in __init__: a recipe is built by
        # assignment too, and -1 here would leave the scheduler no slot to start a step in
        whole = isinstance(value, int) and not isinstance(value, bool)
        if value is not None and (not whole or value < 1):
            raise ValueError(
                f"recipe {self.name!r}: max_workers must be a whole number of at least 1, not"
                f" {value!r}"
            )
        self._max_workers = value

    def add_step(
        self,
        name: str,
        step: Any,
        /,
        *,
        scatter: Iterable[str] | None = None,
        resources: Resources | None = None,
        backend: str | None = None,
        venv: str | None = None,
        **wiring: Any,
    ) -> StepRef:
        """Append a step; keyword arguments wire its inputs.

        ``name`` and ``step`` are positional only, so a tool input called
        ``name`` or ``step`` (wsclean's ``-name``) is wired like any other. An
        input called like one of the other keywords (``backend``, ``scatter``,
        ``resources``, ``venv``) cannot be wired here: given, it is refused
        rather than taken for the keyword.
        """
        _refuse_keyword_inputs(self.name, name, step, scatter, resources, backend, venv)
        ref = StepRef(
            name=name,
            step=step,
            wiring=wiring,
            scatter=None if scatter is None else field_names(scatter, f"step {name!r}: scatter"),
            resources=resources,
            backend=backend,
            venv=venv,
        )
        self.steps.append(ref)
        return ref

    def set_output(self, name: str, ref: Any) -> None:
        """Expose a step's output (or a recipe input) as the recipe's output ``name``.

        Once per output, as a step name is once per recipe: a second call would
        silently replace the first wiring.
        """
        if name in self.output_wiring:
            raise ValueError(
                f"recipe {self.name!r}: output {name!r} is already set (to"
                f" {self.output_wiring[name]!r}); set each output once"
            )
        self.output_wiring[name] = ref

    def add_loop(
        self,
        name: str,
        body: Any,
        /,
        max_iter: int,
        until: str,
        carry: Mapping[str, str] | None = None,
        index_input: str | None = None,
        **inputs: Any,
    ) -> LoopHandle:
        """Repeat ``body`` up to ``max_iter`` times until its ``until`` path exists.

        The body is unrolled into ``NAME.i.STEP`` (a Recipe body) or ``NAME.i``
        (a Cab or pystep body); ``carry`` maps a body output to the body input
        it feeds in the next iteration. A :class:`StepRef` body stands for its
        step, its wiring for inputs given here (those given here win).
        """
        said: dict[str, Any] = {}
        if isinstance(body, StepRef):
            inputs = {**body.wiring, **inputs}
            # what it said for itself goes with it: dropped, a step declared to run
            # in a venv ran on the host, and its resources went undeclared
            said = dict(
                scatter=body.scatter, resources=body.resources, backend=body.backend, venv=body.venv
            )
            body = body.step
        spec = LoopSpec(
            name=name,
            body=body,
            max_iter=max_iter,
            until=until,
            # Anything but a mapping is kept as given for build_graph to refuse by name.
            carry=dict(carry) if isinstance(carry, Mapping) else (carry or {}),
            index_input=index_input,
            inputs=inputs,
            **said,
        )
        self.steps.append(spec)
        return LoopHandle(spec, self.name, self.token)

    def step(
        self,
        cab: Cab,
        *,
        name: str | None = None,
        scatter: Iterable[str] | None = None,
        resources: Resources | None = None,
        backend: str | None = None,
        **wiring: Any,
    ) -> Callable[[Callable[..., Any]], FunctionStep]:
        """Decorator: add an orchestration function ``fn(ctx)`` driving ``cab`` as a step.

        ``name`` names the step (default: the function's name). A cab with an
        input called ``name`` too cannot have it wired here: that is refused,
        rather than the input silently taken for the step's name.
        """
        from shinobi.steps.functions import FunctionStep, bound_cab

        bound_cab(cab, f"recipe {self.name!r}: @recipe.step(...)")
        if name is not None and "name" in getattr(cab.inputs_model, "model_fields", {}):
            raise ValueError(
                f"recipe {self.name!r}: step(name={name!r}) names the step, but cab"
                f" {cab.name!r} has an input 'name' too, which cannot be wired here: write"
                f" recipe.add_step(STEP, shinobi.step({cab.name})(fn), name={name!r}) instead"
            )

        def decorate(fn: Callable[..., Any]) -> FunctionStep:
            bound = FunctionStep(cab, fn, backend=backend, resources=resources)
            self.add_step(
                name or fn.__name__,
                bound,
                scatter=scatter,
                resources=resources,
                backend=backend,
                **wiring,
            )
            return bound

        return decorate

    def __repr__(self) -> str:
        return f"Recipe({self.name!r}, {len(self.steps)} steps)"
