"""Path dtypes and what a model's fields say about the paths a tool touches.

``File``, ``Directory`` and ``MS`` are ``pathlib.Path`` annotated with their
kind; a field typed plainly ``Path`` is a path of either kind. The schema
introspection here is cached per model class because every run, dry run and
compile consults it once per step.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator, Mapping, MutableSequence, MutableSet, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path, PosixPath, PurePath
from typing import TYPE_CHECKING, Annotated, Any, Literal

from shinobi.errors import field_subject

if TYPE_CHECKING:
    from shinobi.backends.base import PathKind

__all__ = [
    "EMPTY_PATH",
    "KIND_NAMES",
    "MS",
    "Directory",
    "FieldSpec",
    "File",
    "PathType",
    "empty_path_in",
    "error_field",
    "field_values",
    "fields_of",
    "first_refusal",
    "input_refusal",
    "on_disk_kind",
    "output_problem",
    "passthrough_problem",
    "paths_within",
    "refused_field",
    "refused_value",
    "tuple_elements",
    "union_refusal",
    "unwrap_annotation",
    "validation_errors",
    "wordless",
]


@dataclass(frozen=True, slots=True)
class PathType:
    """Marks an annotated Path with what it names: a file, a directory, or an MS."""

    kind: Literal["file", "dir", "ms"]


File = Annotated[Path, PathType("file")]
Directory = Annotated[Path, PathType("dir")]
#: A Measurement Set: a directory, so containment counts when comparing paths.
MS = Annotated[Path, PathType("ms")]

DTYPES: dict[str, Any] = {"File": File, "Directory": Directory, "MS": MS}


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of an inputs or outputs model, reduced to what shinobi needs."""

    name: str
    path_kind: Literal["file", "dir", "ms", "any"] | None
    is_list: bool
    is_bool: bool
    required: bool
    default: Any
    description: str | None
    annotation: Any
    #: Text (``str``, or a list of it when ``is_list``): no place for a path.
    is_text: bool = False
    #: A mapping whose values are text (``dict[str, str]``): no place for a path either.
    text_values: bool = False
    #: Paths held deeper than the field's own type or a list of it (a mapping's
    #: values, a model's fields, a tuple's members, a union with a path): found
    #: in the value by :func:`paths_within`.
    nested_paths: bool = False
    #: A mapping or a model: ``str()`` of it is Python's repr, no command-line word.
    structured: bool = False
    #: None is a value it takes (``File | None``, with or without a default).
    nullable: bool = False
    #: A list whose items take None (``list[File | None]``): an item may be a
    #: product that was not made.
    items_nullable: bool = False

    @property
    def promised(self) -> bool:
        """Whether every path this output names must be there once its step is done.

        A field that takes None, or a list whose items do, says its product
        may be missing, default or not; only a required field that admits no
        None promises it.
        """
        return self.required and not self.nullable and not self.items_nullable


#: What a field holds a list of, as pydantic takes it: ``Sequence[bool]`` is as much
#: a list of bools as ``list[bool]`` is.
_LISTS = (list, tuple, set, frozenset, Sequence, MutableSequence, AbstractSet, MutableSet)


def unwrap_annotation(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Any], bool]:
    """Strip Optional and Annotated; report whether the core type is a list."""
    is_list = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            args = typing.get_args(annotation)
            annotation = args[0]
            metadata = [*metadata, *args[1:]]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation, metadata, is_list
            annotation = members[0]
        elif origin in _LISTS and not is_list:
            args = typing.get_args(annotation)
            is_list = True
            annotation = args[0] if args else Any
        else:
            return annotation, metadata, is_list


def tuple_elements(annotation: Any) -> tuple[Any, ...] | None:
    """The element types of a fixed-length tuple field (``tuple[str, float]``:
    ``(str, float)``); None for any other type, a ``tuple[int, ...]`` included."""
    while True:
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is typing.Annotated:
            annotation = args[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in args if a is not type(None)]
            if len(members) != 1:
                return None
            annotation = members[0]
        elif origin is tuple and args and args[-1] is not Ellipsis and args != ((),):
            return args
        else:
            return None


_FIELDS: dict[Any, dict[str, FieldSpec]] = {}


def fields_of(model: Any) -> dict[str, FieldSpec]:
    """The fields of a pydantic model class, in declaration order (memoised)."""
    found = _FIELDS.get(model)
    if found is None:
        found = _FIELDS[model] = _fields_of(model)
    return found


def _fields_of(model: Any) -> dict[str, FieldSpec]:
    from pydantic_core import PydanticUndefined

    specs: dict[str, FieldSpec] = {}
    for name, info in model.model_fields.items():
        core, metadata, is_list = unwrap_annotation(info.annotation, list(info.metadata))
        kind: Literal["file", "dir", "ms", "any"] | None = None
        for meta in metadata:
            if isinstance(meta, PathType):
                kind = meta.kind
        if kind is None and isinstance(core, type) and issubclass(core, Path):
            kind = "any"
        default = None if info.default is PydanticUndefined else info.default
        if info.default_factory is not None:
            try:  # one that needs the other inputs, or fails (an unset variable): unknown here
                default = info.get_default(call_default_factory=True)
            except Exception:  # the run's own validation calls it, and says what went wrong
                default = None
        specs[name] = FieldSpec(
            name=name,
            path_kind=kind,
            is_list=is_list,
            is_bool=core is bool,
            required=info.is_required(),
            default=default,
            description=info.description,
            annotation=info.annotation,
            is_text=core is str,
            text_values=_maps_to_text(core),
            nested_paths=kind is None and _holds_path(info.annotation, set()),
            structured=_is_structured(core),
            nullable=_admits_none(info.annotation),
            items_nullable=is_list and _items_admit_none(info.annotation),
        )
    return specs


def _admits_none(annotation: Any) -> bool:
    """Whether ``annotation`` takes None: Any, None itself, or a union with None in it."""
    if annotation is Any or annotation is None or annotation is type(None):
        return True
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _admits_none(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_admits_none(arg) for arg in typing.get_args(annotation))
    return False


def _items_admit_none(annotation: Any) -> bool:
    """Whether the items of the list type in ``annotation`` take None (``list[File | None]``)."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _items_admit_none(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_items_admit_none(a) for a in typing.get_args(annotation) if a is not type(None))
    if origin in _LISTS:
        args = typing.get_args(annotation)
        return not args or _admits_none(args[0])
    return False


#: Containers that say nothing of what they hold when written bare (``dict``).
_OPEN_CONTAINERS = (dict, list, tuple, set, frozenset)


def _holds_path(annotation: Any, seen: set[int]) -> bool:
    """Whether a value of ``annotation`` can hold a path anywhere inside it.

    ``Any``, ``object`` and a bare ``dict`` (or list...) can: what they hold is
    looked at in the value (only a ``Path`` object counts as a path there).
    """
    if annotation is Any or annotation is object:
        return True
    if id(annotation) in seen:  # a model that refers to itself
        return False
    seen.add(id(annotation))
    if isinstance(annotation, type):
        if issubclass(annotation, PurePath):
            return True
        if annotation in _OPEN_CONTAINERS:
            return True
        fields = getattr(annotation, "model_fields", None)  # a pydantic model's
        if isinstance(fields, dict):
            return any(_holds_path(info.annotation, seen) for info in fields.values())
        return any(_holds_path(hint, seen) for hint in _declared_hints(annotation))
    return any(_holds_path(arg, seen) for arg in typing.get_args(annotation))


def _declared_hints(cls: type) -> list[Any]:
    """The field types of a TypedDict, a dataclass or a NamedTuple (else none)."""
    import dataclasses

    typed_dict = issubclass(cls, dict) and hasattr(
        cls, "__total__"
    )  # typing's or typing_extensions'
    if not (typed_dict or dataclasses.is_dataclass(cls) or hasattr(cls, "_fields")):
        return []
    try:
        return list(typing.get_type_hints(cls).values())
    except Exception:  # a hint that names what cannot be found: look at the value, then
        return [Any]


def _is_structured(core: Any) -> bool:
    """A mapping, or a model whose text is its repr: one that defines ``__str__``
    has chosen its command-line word (``Region`` as ``1.5,-30.0``)."""
    import collections.abc

    origin = typing.get_origin(core) or core
    if not isinstance(origin, type):
        return False
    if issubclass(origin, collections.abc.Mapping):
        return True
    if not isinstance(getattr(origin, "model_fields", None), dict):
        return False
    from pydantic import BaseModel

    return origin.__str__ is BaseModel.__str__


#: Values whose command-line word is plainly their text: checked first, as most are.
_PLAIN = (str, int, float, PurePath)


def wordless(value: Any) -> str | None:
    """What ``value`` is ("a mapping", "a model") when it has no command-line word,
    else None: ``str()`` of it is Python's repr, which no tool reads. A field typed
    ``Any`` or a union lets one through the check made where the cab is declared."""
    if value is None or isinstance(value, _PLAIN):
        return None
    if isinstance(value, bytes | bytearray):  # str() of it is b'...'
        return "bytes"
    if _is_structured(type(value)):
        return "a model" if hasattr(type(value), "model_fields") else "a mapping"
    return None


#: Deeper than any declared shape goes: a value that refers to itself ends here.
_MAX_DEPTH = 32


def paths_within(value: Any, depth: int = 0) -> Iterator[str]:
    """Every path held in ``value``: a mapping's values, a list's, tuple's or set's
    members (a set's in sorted order, so a cache key does not depend on hashing),
    a model's fields, at any depth."""
    if depth > _MAX_DEPTH or value is None or isinstance(value, str | bool):
        return
    if isinstance(value, PurePath):
        yield str(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from paths_within(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from paths_within(item, depth + 1)
    elif isinstance(value, set | frozenset):
        yield from sorted(p for item in value for p in paths_within(item, depth + 1))
    elif isinstance(getattr(type(value), "model_fields", None), dict):
        for _, item in value:
            yield from paths_within(item, depth + 1)
    elif hasattr(type(value), "__dataclass_fields__"):
        for name in type(value).__dataclass_fields__:
            yield from paths_within(getattr(value, name, None), depth + 1)


#: What is said of a path given as "": pydantic reads it as ``Path(".")``.
EMPTY_PATH = "an empty path names no file; give a path (use . for this directory)"


#: Values that hold no "" by exact type (a subclass takes the long way), checked
#: with one set lookup: nearly every input of a large recipe.
_NEVER_EMPTY = frozenset({PosixPath, int, float, bool, type(None)})


def empty_path_in(given: Mapping[str, Any], made: Mapping[str, Any]) -> str | None:
    """The dotted field (``targets.a``) where ``given`` held ``""`` that validation
    made a path, or None.

    pydantic reads ``""`` as ``Path(".")``, so an empty path (an unset variable,
    a blank in a JSON mapping) would silently name the current directory. The
    given value is walked beside the validated one, so whatever the declared
    type (a list, a mapping's values, a model's fields, a union), only a place
    that did become a path counts: ``""`` taken as text is text.
    """
    for name, value in given.items():
        if type(value) in _NEVER_EMPTY:  # most values: not even a call
            continue
        if name in made:
            where = _empty_path_at(value, made[name], 0)
            if where is not None:
                return ".".join([str(name), *where])
    return None


def _empty_path_at(given: Any, made: Any, depth: int) -> list[str] | None:
    """The keys down to a "" in ``given`` that ``made`` holds as a path, or None."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(given, str):
        return [] if given == "" and isinstance(made, PurePath) else None
    if given is None or isinstance(given, _PLAIN):  # most values: no abc Mapping check
        return None
    pairs: list[tuple[Any, Any, Any]] = []
    if isinstance(given, Mapping):
        if isinstance(made, Mapping):
            pairs = [(k, v, made[k]) for k, v in given.items() if k in made]
        elif isinstance(getattr(type(made), "model_fields", None), dict):
            pairs = [(k, v, getattr(made, k)) for k, v in given.items() if hasattr(made, k)]
    elif (
        isinstance(given, list | tuple)
        and isinstance(made, list | tuple)
        and len(given) == len(made)
    ):
        pairs = [(i, v, m) for i, (v, m) in enumerate(zip(given, made, strict=True))]
    for key, value, became in pairs:
        where = _empty_path_at(value, became, depth + 1)
        if where is not None:
            return [str(key), *where]
    return None


def _maps_to_text(annotation: Any) -> bool:
    """Whether ``annotation`` is a mapping (``dict``, ``Mapping``, ``OrderedDict``...)
    whose values are text: ``str``, or a list of it, optional or annotated."""
    import collections.abc

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if not (isinstance(origin, type) and issubclass(origin, collections.abc.Mapping)):
        return False
    return len(args) == 2 and unwrap_annotation(args[1], [])[0] is str


#: A path field's kind as its declaration is written.
KIND_NAMES = {"file": "File", "dir": "Directory", "ms": "MS", "any": "Path"}
#: What each kind (or ``ParamMeta(dtype=)``) must be on disk: an MS is a directory,
#: a plain Path either ("any").
_KIND = {"file": "file", "dir": "dir", "ms": "dir", "any": "any"}
_DTYPE_KIND = {"File": "file", "Directory": "dir", "MS": "dir"}


def on_disk_kind(path_kind: str | None, dtype: str | None) -> PathKind:
    """What a field declared ``path_kind`` (or ``dtype``) must be on disk:
    "file", "dir" (a Directory or an MS) or "any"."""
    kind = path_kind or _DTYPE_KIND.get(dtype or "", "any")
    return _KIND.get(kind, "any")  # type: ignore[return-value]


def _declared(spec: FieldSpec, dtype: str | None) -> str:
    """How ``spec`` is declared, in the words of a model (``list[File]``, ``str``)."""
    if spec.path_kind is not None:
        shown = KIND_NAMES[spec.path_kind]
    elif dtype:
        shown = f"str (dtype {dtype})"
    else:
        shown = "str" if spec.is_text else getattr(spec.annotation, "__name__", "a non-path")
    return f"list[{shown}]" if spec.is_list else shown


def passthrough_problem(given: FieldSpec, made: FieldSpec, dtype: str | None) -> str | None:
    """Why the input ``given`` cannot be passed through as the output ``made``, or None.

    A passthrough output is the path its input was handed, known before the
    tool runs; when the two are declared a different kind of path (a Directory
    in, a File out) or shape (a list in, one path out), that value can never
    be a valid output, and the step would fail only after the tool's work was
    done. ``dtype`` is the ``ParamMeta(dtype=)`` the two share. A plain
    ``Path`` is either kind, and an MS is a Directory.
    """
    if given.structured and not made.structured:  # a mapping or a model is no path
        return f"the input is a mapping or a model, and the output {_declared(made, dtype)}"
    kinds = [on_disk_kind(spec.path_kind, dtype) for spec in (given, made)]
    clash = "any" not in kinds and kinds[0] != kinds[1]
    shaped = given.path_kind is not None or given.is_text  # a known shape, not Any
    if not clash and not (shaped and given.is_list != made.is_list):
        return None
    given_shown, made_shown = _declared(given, dtype), _declared(made, dtype)
    return f"the input is declared {given_shown} and the output {made_shown}"


def validation_errors(exc: BaseException) -> list[Any] | None:
    """The errors of a pydantic ValidationError; None for any other exception.

    For the validations that run for every step of every run: they catch
    whatever the model raised and ask this, so pydantic's exception type is
    imported only once something has gone wrong, not once per step.
    """
    from pydantic import ValidationError

    return exc.errors() if isinstance(exc, ValidationError) else None


def output_problem(exc: BaseException) -> str | None:
    """``output 'n': Input should be a valid integer (got 'abc')``: the first thing
    an outputs model refused, on one line; None when ``exc`` is no such refusal."""
    errors = validation_errors(exc)
    if not errors:
        return None
    return f"{refused_field(errors[0], 'output')}: {refused_value(errors[0])}"


def refused_value(error: Mapping[str, Any]) -> str:
    """pydantic's message for one error, with the value it refused (but for a
    missing one): ``Input should be a valid integer (got 'made.txt')``.

    A path refused as text is a step's ``File`` output wired to a ``str``
    field: taken as text it would be neither made visible to a container nor
    keyed by its content in the step cache, so the fix is the declaration.
    """
    got = "" if error.get("type") == "missing" else f" (got {error.get('input')!r:.80})"
    said = f"{error.get('msg')}{got}"
    if error.get("type") == "string_type" and isinstance(error.get("input"), PurePath):
        said += (
            "; a path goes to a File (or Path) field, which the backend makes visible and"
            " whose content keys the step cache: declare the field so"
        )
    return said


def input_refusal(model: Any, error: Mapping[str, Any]) -> tuple[str, str]:
    """(the dotted field, what is wrong) of one error of ``model``'s refusal of its
    inputs: :func:`error_field` and :func:`refused_value`, but for a fixed-length
    tuple given too few values, said of the input as the command line says it.

    pydantic reports the first element such a tuple lacks as a missing field
    of its own (``size.1``: "Field required"), which read as an input nothing
    was wired to, when ``size=(2048,)`` was: it lacks a value."""
    short = _too_few_values(model, error)
    if short is not None:
        return str(error["loc"][0]), short
    return error_field(error), refused_value(error)


def first_refusal(model: Any, errors: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """(the dotted field, what is wrong) of ``model``'s refusal ``errors``: a union
    input's refusal as a whole (:func:`union_refusal`), else the first error's
    (:func:`input_refusal`)."""
    return union_refusal(model, errors) or input_refusal(model, errors[0])


def union_refusal(model: Any, errors: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """(the field, what is wrong) when ``errors`` are a union input's refusal by each
    of its members; None for any other refusal.

    pydantic reports a value no member takes as one error per member, each at
    the member's name (``u.int``, ``u.literal['auto']``): the first alone named
    an input ``u.int`` there is none of, and only one of the types it may be.
    """
    loc: tuple[Any, ...] = tuple(errors[0].get("loc", ())) if errors else ()
    if len(loc) != 2:
        return None
    info = getattr(model, "model_fields", {}).get(loc[0])
    if info is None or typing.get_origin(info.annotation) not in (typing.Union, types.UnionType):
        return None
    members = [e for e in errors if len(e.get("loc", ())) == 2 and e["loc"][0] == loc[0]]
    if len(members) < 2:
        return None
    said = "; ".join(dict.fromkeys(str(e.get("msg")) for e in members))
    return str(loc[0]), f"{errors[0].get('input')!r:.80} fits none of its types ({said})"


def _too_few_values(model: Any, error: Mapping[str, Any]) -> str | None:
    """What a fixed-length tuple given too few values lacks; None for any other error."""
    loc, given = error.get("loc", ()), error.get("input")
    if error.get("type") != "missing" or len(loc) != 2 or not isinstance(loc[1], int):
        return None
    info = getattr(model, "model_fields", {}).get(loc[0])
    elements = tuple_elements(info.annotation) if info is not None else None
    if elements is None or not isinstance(given, list | tuple):
        return None
    shown = f" ({', '.join(map(repr, given))})" if given else ""
    return (
        f"takes exactly {len(elements)} values, but was given {len(given)}{shown};"
        f" give it {len(elements)}, one for each element"
    )


def error_field(error: Mapping[str, Any]) -> str:
    """The dotted field one of a pydantic ValidationError's errors is about; "" for
    the model as a whole (what a model validator of its own refused)."""
    return ".".join(str(p) for p in error.get("loc", ()))


def refused_field(error: Mapping[str, Any], side: str) -> str:
    """:func:`~shinobi.errors.field_subject` of the field one of a pydantic
    ValidationError's errors is about."""
    return field_subject(error_field(error), side)


def field_values(model: Any) -> dict[str, Any]:
    """A validated model's fields as a plain dict, the same as ``dict(model)``.

    ``dict(model)`` first asks the model for a ``keys`` attribute, which a
    pydantic model answers through its slow ``__getattr__`` and an exception;
    this runs for every step of a run, so it goes straight to the iterator
    (pydantic's own, which knows the model's extras and private names).

    Nearly every validated model holds its fields and nothing else: then what
    the iterator yields is its ``__dict__`` as it is, copied in one call
    rather than a pair at a time through a generator.
    """
    cls = type(model)
    if (
        getattr(cls, "__iter__", None) is (_MODEL_ITER or _model_iter())
        and not model.__pydantic_extra__
    ):
        held = model.__dict__
        if held.keys() == cls.__pydantic_fields__.keys():  # no name pydantic's skips
            return dict(held)
    return dict(iter(model))


#: ``BaseModel.__iter__``, which :func:`field_values` reads past when a model keeps it.
_MODEL_ITER: Any = None


def _model_iter() -> Any:
    """:data:`_MODEL_ITER`, looked up on the first call: pydantic is imported by then
    (a model exists), and need not be with this module."""
    global _MODEL_ITER
    from pydantic import BaseModel

    _MODEL_ITER = BaseModel.__iter__
    return _MODEL_ITER
