"""Resolved values: what every step of a graph will be given, as far as is knowable.

The executor resolves wiring against real results; the dry-run renderer and
the offload compilers resolve it against what is known statically (recipe
inputs, passthroughs, implicit templates, defaults). Both go through
:func:`resolve_value`, so a dry run shows exactly what a run will do.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PosixPath
from typing import Any, NamedTuple

from shinobi.backends.base import PathUse
from shinobi.collector_paused import collector_paused
from shinobi.errors import exception_line, field_subject
from shinobi.exit_guard import ExitInValidator, validated
from shinobi.graph import Graph, Node, output_refs, same_shape
from shinobi.steps.argv import Unknown, joined_list_problem, path_uses, render_argv
from shinobi.steps.outputs import OutputRefused, static_outputs
from shinobi.steps.refs import InputRef, OutputRef
from shinobi.steps.types import (
    EMPTY_PATH,
    empty_path_in,
    error_field,
    field_values,
    fields_of,
    first_refusal,
    validation_errors,
    wordless,
)

__all__ = [
    "Plan",
    "PlannedStep",
    "cab_of",
    "check_statically",
    "checked_inputs",
    "plan_graph",
    "plan_step",
    "preflight",
    "resolve_value",
    "resolve_wiring",
    "scatter_slices",
    "static_input_error",
    "validate_inputs",
]


def resolve_value(value: Any, inputs: Mapping[str, Any], output: Callable[[OutputRef], Any]) -> Any:
    """A wiring value with its references replaced by what they point at."""
    if isinstance(value, InputRef):
        return inputs.get(value.field)
    if isinstance(value, OutputRef):
        return output(value)
    # at any depth of lists, tuples and dict values, as the graph finds its edges
    if isinstance(value, list):
        return [resolve_value(v, inputs, output) for v in value]
    if isinstance(value, tuple):
        items = [resolve_value(v, inputs, output) for v in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value  # a literal stays what it was
        return same_shape(value, items)
    if isinstance(value, dict):
        resolved = {k: resolve_value(v, inputs, output) for k, v in value.items()}
        if all(resolved[k] is v for k, v in value.items()):
            return value  # a literal mapping stays what it was
        return resolved
    return value


def resolve_wiring(
    node: Node, inputs: Mapping[str, Any], output: Callable[[OutputRef], Any]
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for k, v in node.wiring.items():
        kind = type(v)
        if kind in _PLAIN:
            values[k] = v
        elif kind is OutputRef:  # most of the rest: as resolve_value takes them, directly
            values[k] = output(v)
        elif kind is InputRef:
            values[k] = inputs.get(v.field)
        else:
            values[k] = resolve_value(v, inputs, output)
    step = node.step
    if getattr(step, "kind", None) == "cab":  # as cab_of tells, not through Node.kind's str()
        paths = step.text_paths()
        if paths:  # most cabs have none: no set made
            for name in paths & values.keys():
                values[name] = _as_text(values[name])
    return values


#: Plain values by exact type (a subclass takes the long way): a wiring value that
#: resolves to itself, an input value with a command-line word. Most values of a
#: large recipe, passed over with one set lookup rather than a call.
_PLAIN = frozenset({str, int, float, bool, type(None), PosixPath})


def _as_text(value: Any) -> Any:
    """A path (or a list of them) as the text a ``str`` field declared a path takes."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, list | tuple):
        return same_shape(value, [_as_text(v) for v in value])
    return value


def _wired_from(node: Node, name: str) -> str:
    """Where a scattered input's list comes from, as the user gave it: the
    recipe input is the command-line option (``--mss``), not the step's ``ms``."""
    wired = node.wiring.get(name)
    if isinstance(wired, InputRef):
        return f" (input {wired.field!r})"
    if isinstance(wired, OutputRef):
        return f" (output {wired.field!r} of step {wired.step!r})"
    return ""


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
        detail = ", ".join(f"{k} has {v}{_wired_from(node, k)}" for k, v in lengths.items())
        raise ValueError(
            f"step {node.name!r}: scattered inputs must have the same length: {detail}"
        )
    count = next(iter(lengths.values()), 0)
    return [{**values, **{name: values[name][i] for name in node.scatter}} for i in range(count)]


def validate_inputs(node: Node, values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Values checked and coerced by the step's inputs model, defaults filled in."""
    facts = _default_facts(node.step.inputs_model)
    values = _none_as_unset(facts, values)
    refused = _default_refusal(facts, values, where)
    if refused is not None:  # pydantic hands a default over unchecked
        raise ValueError(refused)
    try:
        # wiring names fields, so a field with an alias is wired by its name too
        given = _with_defaults_made(facts, values)
        model = validated(node.step.inputs_model.model_validate, given, by_name=True)
    except Exception as exc:
        errors = validation_errors(exc)
        if errors is not None:
            name, said = first_refusal(node.step.inputs_model, errors)
            raise ValueError(f"{where}: {field_subject(name, 'input')}: {said}") from None
        # a validator of the model's own that raised something else
        raise ValueError(f"{where}: validating its inputs raised {exception_line(exc)}") from None
    made = field_values(model)
    empty = empty_path_in(values, made)
    if empty is not None:
        raise ValueError(f"{where}: input {empty!r}: {EMPTY_PATH}")
    refused = wordless_input(node, made, where) or _joined_list_error(node, made, where)
    if refused is not None:
        raise ValueError(refused)
    return made


class _DefaultFacts(NamedTuple):
    """What an inputs model's defaults become, worked out once per model."""

    #: Defaults their field refuses: (name, alias, what it says).
    refused: tuple[tuple[str, str | None, str], ...]
    #: Defaults the model makes something else of (``c: bool = "false"`` is False,
    #: ``ms: MS = "obs.ms"`` a path, a field validator's rewrite), or that only the
    #: run can check: (name, alias, the default as written, what the model makes
    #: of it on its own, or the default itself when only the run can tell).
    made: tuple[tuple[str, str | None, Any, Any], ...]
    #: Fields whose default is None and whose type refuses None: a None wired to
    #: one (a recipe input left unset, a cab run alone) means "not given" there too.
    unset_by_none: frozenset[str] = frozenset()


_NO_DEFAULT_FACTS = _DefaultFacts((), ())

#: model -> :class:`_DefaultFacts` of its defaults.
_DEFAULT_FACTS: dict[Any, _DefaultFacts] = {}


def _default_facts(model: Any) -> _DefaultFacts:
    found = _DEFAULT_FACTS.get(model)
    if found is None:
        found = _DEFAULT_FACTS[model] = _find_default_facts(model)
    return found


def _default_refusal(facts: _DefaultFacts, values: Mapping[str, Any], where: str) -> str | None:
    """The refusal of a default of the model of ``facts`` that its field's type
    refuses and that ``values`` leave in use (nothing given for the field), or
    None. pydantic does not validate a default, so ``niter: int = 2.5`` would
    reach the tool as ``2.5``; a default of None means "not given" and is taken."""
    for name, alias, said in facts.refused:
        if name not in values and (alias is None or alias not in values):
            return f"{where}: input {name!r}: {said}"
    return None


def _with_defaults_made(facts: _DefaultFacts, values: Mapping[str, Any]) -> Mapping[str, Any]:
    """``values`` with every default the model makes something else of added to
    them as written, for the model to make it as it makes a wired value.

    pydantic does not validate a default, so ``c: bool = "false"`` left unwired
    reached the tool as ``--c false``, a flag turned on, and ``ms: MS = "obs.ms"``
    a template as text; handed over as a value, each becomes what the same
    value wired would (False: no flag; a path), once, validators included.
    """
    if not facts.made:
        return values
    given = dict(values)
    for name, alias, default, _ in facts.made:
        if name not in given and (alias is None or alias not in given):
            given[name] = default
    return given


def _find_default_facts(model: Any) -> _DefaultFacts:
    """The :class:`_DefaultFacts` of ``model``: each default (not None, which means
    "not given" and stays None) checked on its own against its field, in one pass.

    A model whose own "before" validator may fill or convert a field sees what it
    is handed: there no default is refused, and only a path default is handed
    over, as a wired path would be (what the validator makes of it is its own)."""
    if _reshapes_its_input(model):
        return _path_default_facts(model)
    infos = getattr(model, "model_fields", {})
    refused, made, unset = [], [], []
    for name, spec in fields_of(model).items():
        if spec.required:
            continue
        if spec.default is None:
            if _field_check(model, name, None)[0] is not None:
                unset.append(name)
            continue
        alias = infos[name].alias
        said, value = _field_check(model, name, spec.default)
        if said is not None:
            refused.append((name, alias, said))
        elif value is _UNTOLD:  # only the run can check it (the disk, a validator)
            made.append((name, alias, spec.default, spec.default))
        elif spec.path_kind is not None or not _same(value, spec.default):
            made.append((name, alias, spec.default, value))
    if not refused and not made and not unset:
        return _NO_DEFAULT_FACTS
    return _DefaultFacts(tuple(refused), tuple(made), frozenset(unset))


def _none_as_unset(facts: _DefaultFacts, values: Mapping[str, Any]) -> Mapping[str, Any]:
    """``values`` without the Nones given to fields whose default is None and whose
    type refuses None: there None means "not given", wired or not (the docs' rule
    for ``niter: int = None``), and the field takes its default."""
    if not facts.unset_by_none:
        return values
    return {
        name: value
        for name, value in values.items()
        if value is not None or name not in facts.unset_by_none
    }


def _path_default_facts(model: Any) -> _DefaultFacts:
    """The path defaults of a model whose own validators see what it is handed."""
    infos = getattr(model, "model_fields", {})
    made = tuple(
        (name, infos[name].alias, spec.default, spec.default)
        for name, spec in fields_of(model).items()
        if spec.path_kind is not None and spec.default is not None and not spec.required
    )
    return _DefaultFacts((), made) if made else _NO_DEFAULT_FACTS


def _same(made: Any, written: Any) -> bool:
    """Whether ``made`` is ``written`` as it was, type and all, at every depth:
    ``False == 0`` and ``[1.0] == [1]``, but ``0`` is no bool, and ``1`` no float."""
    if made is written:
        return True
    if type(made) is not type(written):
        return False
    if isinstance(made, list | tuple):
        return len(made) == len(written) and all(map(_same, made, written))
    if isinstance(made, dict):
        return made.keys() == written.keys() and all(_same(v, written[k]) for k, v in made.items())
    if isinstance(made, set | frozenset):  # {1.0} == {1}: the members' types too
        return made == written and {type(m) for m in made} == {type(w) for w in written}
    try:
        return bool(made == written)
    except Exception:  # a type whose == does not answer: take it as changed
        return False


def wordless_input(node: Node, values: Mapping[str, Any], where: str) -> str | None:
    """The refusal of a cab's input whose value has no command-line word, or None.

    A mapping or a model given to a field typed ``Any`` or a union would reach
    the tool as Python's repr (``{'k': 1}``); a field declared so is refused
    where the cab is made, this one only once its value is known.
    """
    return _wordless_in(cab_of(node.step), values, where)


_MANY = (list, tuple, set, frozenset)


def _wordless_in(cab: Any, values: Mapping[str, Any], where: str) -> str | None:
    """:func:`wordless_input` of ``cab``, the cab a step runs (None: no cab, no refusal)."""
    if cab is None:
        return None
    for name, value in values.items():
        if type(value) in _PLAIN:  # a word: no call to wordless
            continue
        items = value if isinstance(value, _MANY) else (value,)
        what = next((w for w in map(wordless, items) if w is not None), None)
        if what is not None and not cab.meta(name).skip:
            return (
                f"{where}: input {name!r} is given {what}, which has no command-line form (the"
                " tool would get Python's repr of it); give each of its values an input of its"
                " own, or mark the input ParamMeta(skip=True) to use it only in templates"
            )
    return None


def _joined_list_error(node: Node, values: Mapping[str, Any], where: str) -> str | None:
    """:func:`joined_list_problem` of ``node``'s cab (if it runs one), naming the step."""
    return _joined_in(cab_of(node.step), values, where)


def _joined_in(cab: Any, values: Mapping[str, Any], where: str) -> str | None:
    """:func:`_joined_list_error` of ``cab``, the cab a step runs (or None); a cab
    with no comma list (most) is not asked about the values at all."""
    if cab is None or not cab.comma_lists():
        return None
    said = joined_list_problem(cab, values)
    return f"{where}: {said}" if said is not None else None


#: Validation failures that depend on the filesystem or on the model's own code
#: when the step runs (a FilePath not there yet, a validator that looks at the
#: disk), not on the value alone, and those of checking one field of a scratch
#: instance (a frozen field refuses assignment): left to the check every step
#: gets just before it runs.
_RUN_TIME_ERRORS = frozenset(
    {
        "value_error",
        "assertion_error",
        "path_not_file",
        "path_not_directory",
        "path_exists",
        "frozen_field",
        "frozen_instance",
        "parent_does_not_exist",
        "path_not_socket",
    }
)


def _has_unknown(value: Any) -> bool:
    if isinstance(value, Unknown):
        return True
    if isinstance(value, dict):
        return any(_has_unknown(v) for v in value.values())
    return isinstance(value, list | tuple) and any(_has_unknown(v) for v in value)


#: What :func:`_has_unknown` can find an Unknown in: anything else is known at once.
_MAY_HOLD_UNKNOWN = (Unknown, dict, list, tuple)


_blanks: dict[type, Any] = {}


def _blank(model: type) -> Any:
    """A scratch instance of ``model`` to validate single fields against.

    Field validation writes the value into it; nothing reads it back, so one
    per model serves every check (building one per step cost more than the
    checks themselves).
    """
    blank = _blanks.get(model)
    if blank is None:
        # no default factory is called for it: one may need the other inputs, or fail
        # (an unset variable) where the input is given and pydantic never calls it
        fields = getattr(model, "model_fields", {})
        unmade = {name: None for name, info in fields.items() if info.default_factory is not None}
        blank = _blanks[model] = model.model_construct(**unmade)  # type: ignore[attr-defined]
    return blank


def static_input_error(node: Node, values: Mapping[str, Any], where: str) -> str | None:
    """What is wrong with ``node``'s inputs whatever runs before it, or None.

    ``values`` are resolved as far as is known before the run (run-time values
    are :class:`Unknown`). A literal or recipe input of the wrong type, or a
    required input nothing is wired to, would otherwise fail the step only
    when its turn comes, after the steps before it have run for hours. Each
    known value is checked on its own against its field (the others may not
    be known yet); what the model's own validators decide is left to the run.
    """
    model = node.step.inputs_model
    if _reshapes_its_input(model):
        return None  # a model-level "before" validator may fill or convert anything
    for name, spec in fields_of(model).items():
        if name not in node.wiring:
            if spec.required:
                return _unwired(where, model, name)
            continue
        value = values.get(name)
        if value is None and name in _default_facts(model).unset_by_none:
            continue  # "not given": the field's default None
        said = _field_refusal(model, name, value)
        if said is not None:
            return _refused_input(node, where, name, said, value)
        if not _has_unknown(value):
            said = wordless_input(node, {name: value}, where)
            if said is not None:
                return said
    return None


def _refused_input(node: Node, where: str, name: str, said: str, value: Any) -> str:
    """Input ``name``'s refusal as said, and where a refused None came from when it
    is a recipe input left unset."""
    if not name:  # a validator of the model's own refused the inputs together
        return f"{where}: its inputs: {said}"
    wired = node.wiring.get(name)
    if value is None and isinstance(wired, OutputRef):  # known None: a cab fills it never
        return f"{where}: input {name!r}: {said}; {_never_filled(name, wired)}"
    if value is not None or not isinstance(wired, InputRef):
        return f"{where}: input {name!r}: {said}"
    from shinobi.wording import input_option

    option = input_option(wired.field)
    return (
        f"{where}: input {name!r}: {said}; it is the recipe's input {wired.field!r}, which is"
        f" None (not given?): give it a value ({option} on the command line), or let this"
        " input take None"
    )


def _never_filled(name: str, wired: OutputRef) -> str:
    """Why input ``name``, wired to ``wired``, is None before the run: the cab that
    makes that output says nothing of how (the message said "give it a value")."""
    return (
        f"input {name!r} is wired to {wired.step}.{wired.field}, an output nothing fills"
        f" (its cab gives {wired.field!r} no ParamMeta(implicit=...), harvest= or wrangler),"
        " so it is always None: declare how the tool makes it"
    )


def _field_refusal(model: Any, name: str, value: Any) -> str | None:
    """What field ``name`` of ``model`` says of ``value`` on its own, when that is
    known before the run; None when it takes it, or when only the run can tell
    (an Unknown value, the disk, the model's own code run on a partial model)."""
    if _has_unknown(value):
        return None
    return _field_check(model, name, value)[0]


#: What the model makes of a value when only the run can tell.
_UNTOLD: Any = object()


def _field_check(model: Any, name: str, value: Any) -> tuple[str | None, Any]:
    """(:func:`_field_refusal` of a known ``value``, what the field makes of it, or
    ``_UNTOLD`` when it refuses it or only the run can tell)."""
    blank = _blank(model)
    try:
        validated(model.__pydantic_validator__.validate_assignment, blank, name, value)
    except ExitInValidator as exc:
        return exception_line(exc), _UNTOLD
    except Exception as exc:
        errors = validation_errors(exc)
        if errors and errors[0]["type"] not in _RUN_TIME_ERRORS:
            return first_refusal(model, errors)[1], _UNTOLD
        return None, _UNTOLD
    made = getattr(blank, name, None)
    if empty_path_in({name: value}, {name: made}) is not None:
        return EMPTY_PATH, _UNTOLD
    return None, made


def checked_inputs(
    node: Node, values: Mapping[str, Any], where: str
) -> tuple[dict[str, Any] | None, str | None]:
    """What ``node``'s inputs model makes of ``values`` (None if that cannot be
    known before the run), and what is wrong with them.

    When every value is known, the model validates them all at once, as the
    run will, its own validators included; otherwise each known value is
    checked on its own (:func:`static_input_error`).
    """
    return _checked_against(node, cab_of(node.step), values, where)


def _checked_against(
    node: Node, cab: Any, values: Mapping[str, Any], where: str
) -> tuple[dict[str, Any] | None, str | None]:
    """:func:`checked_inputs` of ``node``, whose step runs ``cab`` (or None): for a
    caller that has the cab already, as :func:`plan_step` has for every step."""
    model = node.step.inputs_model
    facts = _default_facts(model)
    values = _none_as_unset(facts, values)
    if facts.refused:  # most models refuse none of their defaults: nothing to ask
        refused = _default_refusal(facts, values, where)
        if refused is not None:
            return None, refused
    for value in values.values():
        if isinstance(value, _MAY_HOLD_UNKNOWN) and _has_unknown(value):
            found = static_input_error(node, values, where)
            return None, found or _joined_in(cab, values, where)
    try:
        # as the run validates them (validate_inputs): a default made what the model makes of it
        given = _with_defaults_made(facts, values) if facts.made else values
        made = field_values(validated(model.model_validate, given, by_name=True))
    except Exception as exc:
        return None, _model_refusal(node, values, where, exc)
    empty = empty_path_in(values, made)
    if empty is not None:  # pydantic took "" for Path(".")
        return None, f"{where}: input {empty!r}: {EMPTY_PATH}"
    return made, _wordless_in(cab, made, where) or _joined_in(cab, made, where)


def _model_refusal(node: Node, values: Mapping[str, Any], where: str, exc: Exception) -> str | None:
    """What the inputs model's refusal ``exc`` says is wrong before the run, or None
    when only the run can tell (the model's own code, the disk)."""
    if isinstance(exc, ExitInValidator):  # whatever the run would make of it: refused
        return f"{where}: validating its inputs raised {exception_line(exc)}"
    errors = validation_errors(exc)
    if errors is None:  # a model's own code: the run decides
        return None
    wrong = [e for e in errors if e["type"] not in _RUN_TIME_ERRORS]
    if not wrong:
        return None
    first = wrong[0]
    if first["type"] == "missing" and len(first["loc"]) == 1:  # the input itself
        return _unwired(where, node.step.inputs_model, error_field(first))
    name, said = first_refusal(node.step.inputs_model, wrong)
    return _refused_input(node, where, name, said, values.get(name))


def _unwired(where: str, model: Any, name: str) -> str:
    return (
        f"{where}: input {name!r} is required and nothing is wired to it"
        f" (wire it in add_step, or give {model.__name__}.{name} a default)"
    )


def _reshapes_its_input(model: Any) -> bool:
    """Whether ``model`` has a model validator that sees the raw input (before or wrap)."""
    decorators = getattr(model, "__pydantic_decorators__", None)
    validators = decorators.model_validators.values() if decorators is not None else ()
    return any(v.info.mode in ("before", "wrap") for v in validators)


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
    """``values`` with the default of every field not given, for a step whose inputs
    the model could not make before the run (what its command line shows): each
    as the model makes it (:class:`_DefaultFacts`), as the run will hand it over."""
    model = node.step.inputs_model
    made = {name: value for name, _, _, value in _default_facts(model).made}
    for name, spec in fields_of(model).items():
        if name not in values and not spec.required:
            values[name] = made.get(name, spec.default)
    return values


def plan_step(
    name: str, node: Node, values: dict[str, Any], cwd: str, check: bool = True
) -> PlannedStep:
    """One step (not a scatter of it) as it will run, with ``values`` as its inputs;
    ``check``: keep what validating them says (the dry run shows it)."""
    cab = cab_of(node.step)
    if cab is None and node.kind == "recipe":  # a step that runs a cab is no recipe
        assert node.subgraph is not None
        # the nested recipe's own inputs first, then its steps against what it made
        made, error = _checked_against(node, None, values, f"step {name!r}")
        inputs = made if made is not None else _defaults(node, values)
        child = plan_graph(node.subgraph, inputs, cwd, f"{name}.", check=check and made is not None)
        error = error if check else None
        outs = {**_unset_outputs(node), **child.outputs}
        return PlannedStep(name, node, values, outs, children=child, error=error)
    # all known: the command line is rendered from what the model makes of the
    # values (a validator may rewrite one), as the run will render it
    made, error = _checked_against(node, cab, values, f"step {name!r}")
    values = made if made is not None else _defaults(node, values)
    error = error if check else None
    if cab is None:
        outs = {f: Unknown(name, f) for f in fields_of(node.step.outputs_model)}
        return PlannedStep(name, node, values, outs, error=error)
    try:
        outs = static_outputs(cab, name, values)
    except OutputRefused as exc:
        unset = exc.unset
        wired = node.wiring.get(unset) if unset is not None else None
        if unset is not None and isinstance(wired, OutputRef):  # a cab fills it never
            raise ValueError(f"{exc}; {_never_filled(unset, wired)}") from None
        raise
    return PlannedStep(
        name,
        node,
        values,
        outs,
        argv=render_argv(cab, values),
        paths=path_uses(cab, values, outs, cwd),
        error=error,
    )


def plan_graph(
    graph: Graph, inputs: Mapping[str, Any], cwd: str, prefix: str = "", check: bool = True
) -> Plan:
    """Resolve every step of ``graph`` statically against the recipe ``inputs``.

    ``check``: report what :func:`static_input_error` finds (not where the
    inputs are only known as wired, before a nested recipe's model made them).
    """
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
        outputs = step.outputs
        # an Unknown made only when the output is missing, not for every lookup
        return outputs[ref.field] if ref.field in outputs else Unknown(ref.step, ref.field)

    by_index: list[PlannedStep | None] = [None] * len(graph.nodes)
    unsettable = check and _has_nested(graph)
    for i in graph.topological_order():
        node = graph.nodes[i]
        name = prefix + node.name if prefix else node.name  # a top-level step's own, no copy
        # defaults are left to the model (None taken, see _default_refusal), as the run does
        values = resolve_wiring(node, plan.inputs, output)
        unset = _unset_error(graph, node, values, name, prefix) if unsettable else None
        try:
            slices = scatter_slices(node, values) if node.scatter and not unset else None
        except ValueError as exc:
            step = PlannedStep(name, node, values, {}, error=str(exc))
        else:
            if not node.scatter:
                step = plan_step(name, node, values, cwd, check)
            else:
                # A scattered step is its slices: the whole lists are no command line.
                step = PlannedStep(name, node, values, {})
                if slices is not None:
                    step.slices = [
                        plan_step(f"{name}[{k}]", node, v, cwd, check) for k, v in enumerate(slices)
                    ]
                    step.paths = tuple(u for part in step.slices for u in part.paths)
                elif check:  # lists only the run knows: the rest is known before it
                    step.error = _unsliced_error(node, values, name)
        if unset is not None:
            step.error = unset  # before what the input's own check says of the same value
        planned[node.name] = step
        by_index[i] = step
    plan.steps = [s for s in by_index if s is not None]
    plan.outputs = {k: resolve_value(v, plan.inputs, output) for k, v in graph.outputs.items()}
    return plan


def _unsliced_error(node: Node, values: Mapping[str, Any], name: str) -> str | None:
    """:func:`static_input_error` of a scattered step whose lists only the run knows:
    what every slice would be refused for (a required input nothing is wired to,
    a literal of the wrong type), before the steps that make the lists run."""
    if node.kind == "recipe":
        return None  # a nested recipe's inputs are checked as its model makes them
    items = {key: Unknown(name, key) for key in node.scatter}
    return static_input_error(node, {**values, **items}, f"step {name!r}")


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
            error = _input_error(graph, inputs)
            if error is not None:
                raise ValueError(error)
            return
        plan = plan_graph(graph, inputs, cwd or os.getcwd())
    error = _first_error(plan.steps) or recipe_output_error(graph, plan.outputs)
    if error is not None:
        raise ValueError(error)


def check_statically(
    graph: Graph, inputs: Mapping[str, Any], cwd: str | None = None, *, keep_plan: bool = False
) -> Plan | None:
    """:func:`preflight` as the usage error a person (or a program) is refused with.

    With ``keep_plan`` the static plan is made here and returned, for a caller
    that draws or compiles it, so it is made once.
    """
    import os

    from shinobi.errors import UsageError

    try:
        with collector_paused():  # a few objects a step, all alive after (see build_graph)
            plan = plan_graph(graph, inputs, cwd or os.getcwd()) if keep_plan else None
            preflight(graph, inputs, cwd, plan=plan)
    except ValueError as exc:
        raise UsageError(f"recipe {graph.recipe.name!r}, {exc}") from None
    return plan


def _unknown(ref: OutputRef) -> Unknown:
    return Unknown(ref.step, ref.field)


def _input_error(graph: Graph, inputs: Mapping[str, Any], prefix: str = "") -> str | None:
    """:func:`static_input_error` over every step, without planning command lines.

    This is the part of the static check every recipe can fail; it costs one
    field validation per wired value, where a plan would render every command
    line and path too.
    """
    return _checked(graph, inputs, prefix)[0]


def _checked(
    graph: Graph, inputs: Mapping[str, Any], prefix: str
) -> tuple[str | None, dict[str, Any]]:
    """(what :func:`_input_error` finds, the recipe's outputs as far as known)."""
    made: dict[str, dict[str, Any]] = {}  # a cab step's checked inputs, when all known
    nested: dict[str, dict[str, Any]] = {}  # a nested recipe's outputs, as far as known

    def output(ref: OutputRef) -> Any:
        """A passthrough output is the path its cab was handed: known before the run,
        through a nested recipe's ``set_output`` too."""
        producer = graph.nodes[graph.index[ref.step]]
        if _never_set(graph, ref) is not None:
            # always the outputs model's default; a scatter's count is not known here
            return _unknown(ref) if producer.scatter else _unset_outputs(producer)[ref.field]
        if ref.step in nested and not producer.scatter:
            found = nested[ref.step].get(ref.field)
            return _unknown(ref) if found is None else found
        if producer.scatter or getattr(producer.step, "kind", None) != "cab":
            return _unknown(ref)
        rule = producer.step.output_rules().get(ref.field)
        if rule == "default":  # nothing fills it: its default in every run, as the dry run says
            return fields_of(producer.step.outputs_model)[ref.field].default
        handed = made.get(ref.step, {}).get(ref.field)
        return handed if handed is not None and rule == "passthrough" else _unknown(ref)

    unsettable = _has_nested(graph)
    for node in graph.nodes:
        name = f"{prefix}{node.name}"
        values = resolve_wiring(node, inputs, output)
        found = _unset_error(graph, node, values, name, prefix) if unsettable else None
        if found is not None:
            return found, {}
        if node.subgraph is not None:
            handed, found = checked_inputs(node, values, f"step {name!r}")
            if found is None and handed is not None:
                found, nested[node.name] = _checked(node.subgraph, handed, f"{name}.")
        elif node.scatter:
            found = None
            for k, part in enumerate(_known_slices(node, values)):
                found = found or checked_inputs(node, part, f"step '{name}[{k}]'")[1]
        else:
            checked, found = checked_inputs(node, values, f"step {name!r}")
            if checked is not None:
                made[node.name] = checked
        if found is not None:
            return found, {}
    outputs = {k: resolve_value(v, inputs, output) for k, v in graph.outputs.items()}
    return recipe_output_error(graph, outputs, prefix), outputs


def _never_set(graph: Graph, ref: OutputRef) -> Node | None:
    """The nested recipe step ``ref`` names when its recipe never sets ``ref.field``
    (no ``set_output`` for it), else None: its value is then the outputs model's
    default in every run, known before any."""
    i = graph.index.get(ref.step)
    producer = graph.nodes[i] if i is not None else None
    if producer is None or producer.subgraph is None:
        return None
    return None if ref.field in producer.subgraph.outputs else producer


def _unset_outputs(node: Node) -> dict[str, Any]:
    """A nested recipe step's outputs its recipe never sets, each its model's default
    (what the run gives them)."""
    assert node.subgraph is not None
    return {
        name: spec.default
        for name, spec in fields_of(node.step.outputs_model).items()
        if name not in node.subgraph.outputs
    }


def _has_nested(graph: Graph) -> bool:
    """Whether ``graph`` has a nested recipe step: without one no output of it can be
    unset (:func:`_never_set`), and :func:`_unset_error` need not look at any step."""
    return any(node.subgraph is not None for node in graph.nodes)


def _unset_error(
    graph: Graph, node: Node, values: Mapping[str, Any], name: str, prefix: str
) -> str | None:
    """What is wrong with an input wired to an output its nested recipe never sets,
    when the input refuses the default that output always is; said so, as the
    input's own refusal of None would leave the cause (a missing ``set_output``
    inside the sub-recipe) to be guessed."""
    model = node.step.inputs_model
    for key, wired in node.wiring.items():
        unset = _unset_refs(graph, wired)
        if not unset:  # nearly every input: the model is not looked at for it
            continue
        if _reshapes_its_input(model):
            return None  # a model-level "before" validator may fill or convert anything
        if _refuses(model, key, values.get(key), key in node.scatter):
            return f"step {name!r}: input {key!r} {_never_set_said(*unset[0], prefix)}"
    return None


def _unset_refs(graph: Graph, wired: Any) -> list[tuple[OutputRef, Node]]:
    """The references in a wiring value to outputs their nested recipe never sets,
    each with its nested recipe step."""
    return [(ref, p) for ref in output_refs(wired) if (p := _never_set(graph, ref)) is not None]


def _never_set_said(ref: OutputRef, producer: Node, prefix: str) -> str:
    """What a value wired to an output its nested recipe never sets is, and the fix."""
    inner = producer.step.name
    default = _unset_outputs(producer)[ref.field]
    return (
        f"is wired to {prefix}{ref}, which recipe {inner!r} never sets, so it is always"
        f" {default!r} (add {inner}.set_output({ref.field!r}, ...))"
    )


def _refuses(model: Any, name: str, value: Any, scattered: bool) -> bool:
    """Whether field ``name`` refuses ``value`` before the run; a scattered one
    takes its members (and refuses what is no list)."""
    if not scattered:
        return _field_refusal(model, name, value) is not None
    if _has_unknown(value) and not isinstance(value, list | tuple):
        return False
    if not isinstance(value, list | tuple):
        return True
    return any(_field_refusal(model, name, part) is not None for part in value)


def recipe_output_error(graph: Graph, outputs: Mapping[str, Any], prefix: str = "") -> str | None:
    """What is wrong with a recipe's outputs known before the run (a passthrough
    path ``set_output`` wires to an ``int``), or None: found after every step ran,
    it failed a run that had done all its work."""
    model = graph.recipe.outputs_model
    for name, value in outputs.items():
        said = _field_refusal(model, name, value) if name in fields_of(model) else None
        if said is not None:
            where = f"recipe {prefix.rstrip('.')!r}: " if prefix else ""
            unset = _unset_refs(graph, graph.outputs[name])
            if unset:
                return f"{where}output {name!r} {_never_set_said(*unset[0], prefix)}"
            return f"{where}output {name!r}: {said}"
    return None


def _known_slices(node: Node, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The slices of a scattered step as far as they are known; none when a list is not."""
    try:
        return scatter_slices(node, values) or []
    except ValueError:  # unequal lists: the plan reports that (and _can_fail plans it)
        return []


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
            if part.error:
                return part.error
            if part.children is not None:
                found = _first_error(part.children.steps)
                if found is not None:
                    return found
    return None
