"""Keys a model inside a recipe input would drop without a word.

A pydantic model ignores keys it does not know unless told otherwise, so a
misspelt key in a model input given as a mapping (``--solve '{"solnt": 10}'``
on the command line, ``{"solve": {"solnt": 10}}`` from Python) ran on the
field's default. The top level of the inputs is checked by the runner; this
walks the values below it, through lists, tuples, mappings and optional types,
to every mapping a model will read.

A model that says what to do with extra keys (``extra="allow"``, or
``extra="ignore"`` written out) keeps its choice: only pydantic's implicit
default, which ``model_config`` does not hold, counts as "not allowed". A model
or field with a validator that runs before pydantic's own (``mode="before"``,
``"wrap"``, ``"plain"``) may reshape the mapping first, so it is not checked.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping
from typing import Any

__all__ = ["UnknownKey", "ambiguous_alias", "input_spellings", "unknown_key"]

#: Validator modes that see the raw value before pydantic reads its keys.
_RESHAPING = frozenset({"before", "wrap", "plain"})


class UnknownKey(typing.NamedTuple):
    """Where the key is (``["solve", "solnt"]``) and the keys its model reads."""

    path: list[str]
    known: list[str]


def unknown_key(model: Any, values: Mapping[str, Any]) -> UnknownKey | None:
    """The first key under ``values`` (an inputs model's mapping) that a nested
    model would drop, or None. The top-level keys are not judged here."""
    return None if _reshaped_model(model) else _below(model, values)


def _below(model: Any, values: Mapping[Any, Any]) -> UnknownKey | None:
    """The first dropped key in the values of ``model``'s fields."""
    spelled = input_spellings(model)
    for key, value in values.items():
        name = spelled.get(key)
        if name is None or _reshaped_field(model, name):
            continue
        found = _in_value(model.model_fields[name].annotation, value)
        if found is not None:
            return UnknownKey([str(key), *found.path], found.known)
    return None


def _in_value(annotation: Any, value: Any) -> UnknownKey | None:
    """The first dropped key in ``value``, read as ``annotation``."""
    if not isinstance(value, Mapping | list | tuple) or not _holds_model(annotation):
        return None  # a plain value, or a type that reads no model: nothing to drop
    core = _single(annotation)
    if core is None:
        return None
    if _is_model(core):
        return _in_model(core, value) if isinstance(value, Mapping) else None
    origin, args = typing.get_origin(core), typing.get_args(core)
    if isinstance(value, Mapping) and origin is not None and _is_mapping(origin) and args:
        return _first(args[-1], ((str(k), v) for k, v in value.items()))
    if isinstance(value, list | tuple) and args:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            pairs = zip(args, value, strict=False)  # a tuple's items: each its own type
            return _first_typed((str(i), kind, item) for i, (kind, item) in enumerate(pairs))
        return _first(args[0], ((str(i), item) for i, item in enumerate(value)))
    return None


def _first(annotation: Any, items: typing.Iterable[tuple[str, Any]]) -> UnknownKey | None:
    """The first dropped key among items that all read as ``annotation``."""
    return _first_typed((where, annotation, item) for where, item in items)


def _first_typed(items: typing.Iterable[tuple[str, Any, Any]]) -> UnknownKey | None:
    for where, annotation, item in items:
        found = _in_value(annotation, item)
        if found is not None:
            return UnknownKey([where, *found.path], found.known)
    return None


def _in_model(model: Any, value: Mapping[Any, Any]) -> UnknownKey | None:
    """The first key of ``value`` that ``model`` drops, here or deeper."""
    if model.model_config.get("extra") not in (None, "forbid") or _reshaped_model(model):
        return None
    spelled = input_spellings(model)
    for key in value:
        if key not in spelled:
            return UnknownKey([str(key)], list(model.model_fields))
    return _below(model, value)


def _single(annotation: Any) -> Any:
    """``annotation`` without ``Annotated`` and ``| None``; None for a union of
    several types, whose mapping could be meant for any of them."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _single(kinds[0]) if len(kinds) == 1 else None
    return annotation


def _holds_model(annotation: Any) -> bool:
    """Whether a value of ``annotation`` can hold a model anywhere (a list of
    paths does not: its ten thousand items are not walked)."""
    try:
        return _holds_model_cached(annotation)
    except TypeError:  # an unhashable annotation: walk it
        return True


@functools.cache
def _holds_model_cached(annotation: Any) -> bool:
    if _is_model(annotation):
        return True
    return any(_holds_model(arg) for arg in typing.get_args(annotation))


def _is_model(kind: Any) -> bool:
    """A pydantic model with fields of its own (a RootModel reads no keys)."""
    from pydantic import BaseModel, RootModel

    return (
        isinstance(kind, type) and issubclass(kind, BaseModel) and not issubclass(kind, RootModel)
    )


def _is_mapping(origin: Any) -> bool:
    return isinstance(origin, type) and issubclass(origin, Mapping)


def input_spellings(model: Any) -> dict[Any, str]:
    """Every key ``model`` reads (names, plain aliases, alias choices), with its field."""
    known: dict[Any, str] = {}
    for name, info in getattr(model, "model_fields", {}).items():
        known[name] = name
        known.update((alias, name) for alias in _aliases(info))
    return known


def ambiguous_alias(model: Any) -> tuple[str, str, str] | None:
    """A key that names two fields of ``model``: (the key, the field whose alias
    it is, the other field), or None.

    ninja validates inputs by name and by alias, so with ``start`` aliased
    ``begin`` beside a field ``begin``, the key ``begin`` sets both (and the
    command line would show two options, each changing both inputs).
    """
    fields = getattr(model, "model_fields", {})
    owners = {name: name for name in fields}
    for name, info in fields.items():
        for alias in _aliases(info):
            other = owners.setdefault(alias, name)
            if other != name:
                return alias, name, other
    return None


def _aliases(info: Any) -> list[str]:
    """The plain keys a field is read from besides its name (``alias``, and each
    of ``validation_alias``'s choices), each once."""
    spelled: list[str] = []
    for alias in (info.alias, info.validation_alias):
        choices = getattr(alias, "choices", [alias])  # AliasChoices: each plain name
        spelled.extend(c for c in choices if isinstance(c, str))
    return list(dict.fromkeys(spelled))


def _reshaped_model(model: Any) -> bool:
    """Whether a model validator of ``model`` sees the mapping before its fields do."""
    validators = model.__pydantic_decorators__.model_validators.values()
    return any(v.info.mode in _RESHAPING for v in validators)


def _reshaped_field(model: Any, name: str) -> bool:
    """Whether a field validator may turn field ``name``'s value into something else."""
    validators = model.__pydantic_decorators__.field_validators.values()
    return any(
        v.info.mode in _RESHAPING and (name in v.info.fields or "*" in v.info.fields)
        for v in validators
    )
