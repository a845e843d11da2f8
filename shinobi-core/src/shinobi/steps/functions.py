"""Steps whose body is Python: orchestration functions and pysteps.

``@shinobi.step(cab)`` binds ``fn(ctx)``, which decides how (and how often) the
cab runs through ``ctx.run()``. It changes nothing in the declared graph, and
a recipe that has one cannot be offloaded. ``@shinobi.pystep`` makes a plain
Python function a step, its schemas taken from its type hints.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, overload

from shinobi.steps.refs import field_names

if TYPE_CHECKING:
    from shinobi.resources import Resources
    from shinobi.steps.cab import Cab
    from shinobi.steps.result import StepResult

__all__ = ["FunctionStep", "PyStep", "StepContext", "pystep", "step"]


def _runs_when_called(fn: Callable[..., Any], what: str) -> None:
    """Refuse a function whose call does not run its body (a generator, a coroutine).

    Calling one only makes a generator or coroutine object; its body, and
    every ``ctx.run`` in it, would never run while the step reported success.
    """
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        kind = "an async function"
    elif inspect.isgeneratorfunction(fn):
        kind = "a generator function (it uses yield)"
    else:
        return
    name = getattr(fn, "__qualname__", repr(fn))
    raise TypeError(
        f"{what} {name!r} is {kind}: calling it would not run its body; make it a plain"
        " function that returns"
    )


def _takes_ctx(fn: Callable[..., Any]) -> None:
    """Refuse, where it is declared, a function that cannot be called as ``fn(ctx)``:
    otherwise its step fails with a TypeError after the steps before it ran."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or an odd callable: its call decides
        return
    try:
        signature.bind(object())
    except TypeError:
        name = getattr(fn, "__qualname__", repr(fn))
        raise TypeError(
            f"the orchestration function {name!r} must take one argument, the step's"
            f" context (def {getattr(fn, '__name__', 'fn')}(ctx): ...), not {signature}"
        ) from None


def bound_cab(cab: object, how: str = "@shinobi.step(...)") -> Cab:
    """``cab``, refused unless it is a :class:`Cab`: an orchestration function
    drives one tool through ``ctx.run()``, and anything else (a pystep, another
    orchestration function, a recipe, a name) would fail only once the recipe
    is built or run, as an internal error. ``how`` is what was written."""
    from shinobi.steps.cab import Cab

    if isinstance(cab, Cab):
        return cab
    raise TypeError(
        f"{how} binds an orchestration function to a Cab, but was given {_described(cab)}"
    )


def _described(thing: object) -> str:
    """What was given in place of a cab, and what to write instead."""
    from shinobi.steps.recipe import Recipe

    name = getattr(thing, "name", None) or getattr(thing, "__name__", None)
    if isinstance(thing, FunctionStep):
        return f"the orchestration function {name!r}; bind its cab: @shinobi.step({name}.cab)"
    if isinstance(thing, PyStep):
        return f"the pystep {name!r}, a step of its own: add it with recipe.add_step()"
    if isinstance(thing, Recipe):
        return f"the recipe {name!r}; add a nested recipe with recipe.add_step()"
    if callable(thing):
        return f"the function {name!r}; write @shinobi.step(CAB), naming the cab it drives"
    return f"{thing!r} ({type(thing).__name__}); declare a Cab(...) for the tool and pass it"


class FunctionStep:
    """A cab driven by an orchestration function ``fn(ctx)``."""

    kind = "function"

    def __init__(
        self,
        cab: Cab,
        fn: Callable[[StepContext], Any],
        *,
        backend: str | None = None,
        resources: Resources | None = None,
        scatter: Iterable[str] = (),
    ) -> None:
        self.cab = bound_cab(cab, "FunctionStep(...)")
        _runs_when_called(fn, "the orchestration function")
        _takes_ctx(fn)
        self.fn = fn
        self.name = getattr(fn, "__name__", cab.name)
        self.backend = backend
        self.resources = resources
        self.scatter = field_names(scatter)
        self.inputs_model = cab.inputs_model
        self.outputs_model = cab.outputs_model
        self.image = cab.image

    def __call__(self, ctx: StepContext) -> Any:
        return self.fn(ctx)


class StepContext:
    """What an orchestration function receives.

    ``ctx.inputs`` holds the step's resolved inputs; ``ctx.run(**overrides,
    backend=...)`` runs the cab (again) and returns its :class:`StepResult`.
    """

    def __init__(
        self,
        name: str,
        inputs: Mapping[str, Any],
        runner: Callable[[dict[str, Any], str | None], StepResult],
    ) -> None:
        self.name = name
        self.inputs = dict(inputs)
        self._runner = runner
        self.results: list[StepResult] = []

    def run(self, backend: str | None = None, **overrides: Any) -> StepResult:
        values = {**self.inputs, **overrides}
        result = self._runner(values, backend)
        self.results.append(result)
        return result


def step(
    cab: Cab,
    *,
    backend: str | None = None,
    resources: Resources | None = None,
    scatter: Iterable[str] = (),
) -> Callable[[Callable[[StepContext], Any]], FunctionStep]:
    """Decorator: bind an orchestration function to ``cab``.

    ``backend``, ``resources`` and ``scatter`` are the step's defaults; the
    same arguments of ``add_step`` win over them.
    """

    bound_cab(cab)  # refused here, at the decorator, not when the recipe is built
    scatter = field_names(scatter)  # refused here, at the decorator, not when it is applied

    def decorate(fn: Callable[[StepContext], Any]) -> FunctionStep:
        return FunctionStep(cab, fn, backend=backend, resources=resources, scatter=scatter)

    return decorate


class PyStep:
    """A Python function as a step; inputs and outputs come from its type hints.

    The function returns a model instance, a mapping of output fields, or (for
    a non-model return annotation) a plain value stored as output ``result``.
    """

    kind = "python"

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        image: str | None = None,
        venv: str | None = None,
        backend: str | None = None,
        resources: Resources | None = None,
        scatter: Iterable[str] = (),
    ) -> None:
        from pydantic import BaseModel, create_model

        _runs_when_called(fn, "the pystep")
        if (venv or image) and "<locals>" in fn.__qualname__:
            outer = fn.__qualname__.rsplit(".<locals>", 1)[0].rsplit(".", 1)[-1]
            raise TypeError(
                f"pystep {fn.__name__!r} is defined inside {outer}(), but a pystep with"
                f" {'venv' if venv else 'image'}= runs in another interpreter, which imports"
                " it by its module-level name: define it at module level"
            )
        source = getattr(getattr(fn, "__code__", None), "co_filename", None)
        if (venv or image) and source is not None and not os.path.isfile(source):
            # a notebook cell, `python -`, exec(): the other interpreter has no file to
            # import it from, and the step failed only when its turn came
            raise TypeError(
                f"pystep {fn.__name__!r} is defined in {source!r}, which is no file, but a"
                f" pystep with {'venv' if venv else 'image'}= runs in another interpreter,"
                " which imports it from its module's file: define it in a .py file and"
                " import it from there"
            )
        self.fn = fn
        self.name = fn.__name__
        self.image = image
        self.venv = venv
        self.backend = backend
        self.resources = resources
        self.scatter = field_names(scatter)
        hints = _hints(fn)
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(fn).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"pystep {self.name!r}: *args/**kwargs cannot be inputs")
            if param.kind is param.POSITIONAL_ONLY:
                raise TypeError(
                    f"pystep {self.name!r}: parameter {pname!r} is positional-only (before"
                    " /), but a step's inputs are passed by name; drop the /"
                )
            if pname.startswith("_") or pname.startswith("model_"):
                # pydantic keeps _x as a private attribute and reserves model_*: the
                # input was dropped without a word, or failed later through ninja's code
                raise TypeError(
                    f"pystep {self.name!r}: parameter {pname!r} cannot be an input (a name"
                    " starting with '_' or 'model_' is pydantic's own); rename it"
                )
            annotation = hints.get(pname, Any)
            default = ... if param.default is param.empty else param.default
            fields[pname] = (annotation, default)
        self.inputs_model: type[BaseModel] = _checked_model(self.name, "inputs", fields)
        ret = hints.get("return", None)
        self.wraps_result = False
        if isinstance(ret, type) and issubclass(ret, BaseModel):
            self.outputs_model: type[BaseModel] = ret
        elif ret is None or ret is type(None):
            self.outputs_model = create_model(f"{self.name}_outputs")
        else:
            self.wraps_result = True
            self.outputs_model = _checked_model(self.name, "outputs", {"result": (ret, None)})

    def required_outputs(self) -> frozenset[str]:
        """The outputs the function must make: its return model's required fields, or
        ``result`` when the return annotation does not admit None (``-> File``; the
        field itself defaults to None, as a function declared to return nothing
        returns)."""
        from shinobi.steps.types import fields_of

        specs = fields_of(self.outputs_model).items()
        return frozenset(
            n
            for n, spec in specs
            if (spec.required or self.wraps_result) and not (spec.nullable or spec.items_nullable)
        )

    def outputs_from(self, value: Any) -> dict[str, Any]:
        """The output fields of a return value."""
        from pydantic import BaseModel

        if self.wraps_result:
            return {"result": value}
        if isinstance(value, BaseModel):
            return self._by_alias(value.model_dump())
        if value is None:
            return {}
        if isinstance(value, Mapping):
            self._refuse_unknown_keys(value)
            return self._by_alias(dict(value))
        if not self.outputs_model.model_fields:  # declared to return nothing (or not at all)
            raise TypeError(
                f"pystep {self.name!r} returned {type(value).__name__}, but its return"
                " annotation declares no outputs: annotate the return type (-> float, or a"
                " pydantic model of its outputs) or return None"
            )
        raise TypeError(
            f"pystep {self.name!r} returned {type(value).__name__}; return a"
            f" {self.outputs_model.__name__} or a dict of its fields"
        )

    def _by_alias(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` keyed as the outputs model validates by default: by a field's
        alias where it has one. (The interpreter a pystep runs in may have a
        pydantic older than ``model_validate(by_name=True)``.)"""
        fields = self.outputs_model.model_fields
        aliases = {n: f.alias for n, f in fields.items() if isinstance(f.alias, str)}
        if not aliases:
            return values
        return {aliases.get(k, k): v for k, v in values.items()}

    def _refuse_unknown_keys(self, value: Mapping[Any, Any]) -> None:
        """A returned key no output has would be dropped by validation: a misspelt
        optional output would silently be None."""
        fields = self.outputs_model.model_fields
        known = set(fields) | {f.alias for f in fields.values() if f.alias}
        unknown = [key for key in value if key not in known]
        if unknown:
            from shinobi.errors import did_you_mean

            shown = ", ".join(repr(key) for key in unknown)
            raise TypeError(
                f"pystep {self.name!r} returned {shown}, which {self.outputs_model.__name__}"
                f" has no field for (its outputs: {', '.join(fields) or 'none'})"
                f"{did_you_mean(str(unknown[0]), list(fields))}"
            )

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        """Pickled by where it is defined, as a function is: the decorator put this
        object where the function was, so pickling the function itself failed ("not
        the same object as module.name"), and a recipe holding a pystep could not go
        to a process pool."""
        return _pystep_at, (self.fn.__module__, self.fn.__qualname__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The function's type hints, resolved: they become its steps' input and output
    models. One that cannot be resolved (a name imported only under
    ``TYPE_CHECKING``, a class local to a function, under ``from __future__
    import annotations``) is refused here, naming it: left as text, it made a
    model pydantic refused at run time in words about a model the user never
    wrote, or a return model read as a plain value."""
    import typing

    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raw = dict(getattr(fn, "__annotations__", {}))
        where, hint, why = "its type hints", None, exc
        for name, written in raw.items():
            if not isinstance(written, str):
                continue
            try:
                eval(written, dict(getattr(fn, "__globals__", {})))  # as get_type_hints does
            except Exception as failed:
                where = "its return" if name == "return" else f"parameter {name!r}"
                hint, why = written, failed
                break
        shown = f"the type hint {hint!r} of {where}" if hint is not None else where
        raise TypeError(
            f"pystep {fn.__name__!r}: {shown} cannot be resolved ({type(why).__name__}:"
            f" {why}); import what it names at module level (not only under TYPE_CHECKING),"
            " and define the classes it names at module level, above the pystep"
        ) from None


@overload
def pystep(fn: Callable[..., Any], /) -> PyStep: ...
@overload
def pystep(
    *,
    image: str | None = None,
    venv: str | None = None,
    backend: str | None = None,
    resources: Resources | None = None,
    scatter: Iterable[str] = (),
) -> Callable[[Callable[..., Any]], PyStep]: ...
def pystep(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    image: str | None = None,
    venv: str | None = None,
    backend: str | None = None,
    resources: Resources | None = None,
    scatter: Iterable[str] = (),
) -> PyStep | Callable[[Callable[..., Any]], PyStep]:
    """Make a Python function a step: ``@pystep`` or ``@pystep(image=..., venv=...)``."""
    scatter = field_names(scatter)

    def decorate(f: Callable[..., Any]) -> PyStep:
        return PyStep(
            f, image=image, venv=venv, backend=backend, resources=resources, scatter=scatter
        )

    return decorate(fn) if fn is not None else decorate


def _checked_model(step: str, side: str, fields: dict[str, Any]) -> Any:
    """The pystep's inputs or outputs model; a type pydantic cannot check, refused in
    a pystep's terms (pydantic's own advice, ``arbitrary_types_allowed``, is about a
    model config the pystep's author never wrote)."""
    from pydantic import PydanticSchemaGenerationError, create_model

    try:
        return create_model(f"{step}_{side}", **fields)
    except PydanticSchemaGenerationError:
        for name, spec in fields.items():
            try:
                create_model(f"{step}_{side}", **{name: spec})
            except PydanticSchemaGenerationError:
                what = "its return value" if side == "outputs" else f"parameter {name!r}"
                annotation = getattr(spec[0], "__name__", None) or repr(spec[0])
                raise TypeError(
                    f"pystep {step!r}: {what} is annotated {annotation}, a type shinobi cannot"
                    " check or pass between steps; annotate it with a type pydantic knows"
                    " (str, int, float, bool, Path, a list or dict of them, or a pydantic"
                    " model)"
                ) from None
        raise


def _pystep_at(module: str, qualname: str) -> Any:
    """The object named ``qualname`` in ``module``: an unpickled pystep."""
    import importlib

    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found
