"""Turning a cab and its resolved inputs into an argv, and into the paths it touches.

The rules, in order (they are documented for users in docs/cabs.md):

* the command comes first, then every option in the inputs model's field
  order, then every positional field in field order;
* ``None`` is omitted; ``False`` is omitted and ``True`` is the bare flag,
  except with ``style="equals"``, where a bool is ``key=True`` / ``key=False``
  (a key=value tool such as CASA falls back to its own default for a key left
  out, which may well be ``True``);
* a list follows its field's ``list_style``; an empty list is omitted;
  a positional list contributes each element;
* ``skip`` fields never appear; everything else is ``str(value)``;
* a relative path that starts with ``-`` (a path-typed field's value) is
  given as ``./-v``: the same file, which no tool can read as an option.

Nothing here goes through a shell, so spaces, quotes and ``$(...)`` in values
reach the tool exactly as written.
"""

from __future__ import annotations

import glob
import json
import os
import string
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from pathlib import PosixPath
from typing import Any, NamedTuple

from shinobi.backends.base import PathKind, PathRole, PathUse
from shinobi.harvest import anchored
from shinobi.steps.cab import Cab, template_root
from shinobi.steps.types import fields_of, on_disk_kind, paths_within

__all__ = [
    "Unknown",
    "UnsetInput",
    "format_template",
    "harvest_glob",
    "has_secret",
    "joined_list_problem",
    "masked",
    "on_disk_kind",
    "path_uses",
    "render_argv",
    "revealed",
    "secret_inputs",
    "secret_texts",
    "secrets_within",
    "shows_secret",
]


class Unknown:
    """A value that only exists once an upstream step has run."""

    __slots__ = ("field", "step")

    def __init__(self, step: str, field: str) -> None:
        self.step = step
        self.field = field

    def __str__(self) -> str:
        return f"<{self.step}.{self.field}>"

    __repr__ = __str__


#: isinstance() against these is cheaper than against ``A | B`` written inline,
#: which builds the union on every call (this runs for every value of every step).
_SEQUENCE = (list, tuple)
_SET = (set, frozenset)
_NO_PATH = (Unknown, bool)
_NUMBER = (int, float)  # bool too
_PATH_LIKE = (str, os.PathLike)

#: A path or its text by exact type (a subclass, an enum, takes the long way):
#: its word is its ``str()``, and it names one path. Nearly every path value of a
#: large recipe, told with one set lookup.
_ONE_PATH = frozenset({str, PosixPath})

#: Values that are no secret and hold none, by exact type: passed over with one
#: set lookup rather than asked for ``get_secret_value`` (an AttributeError each).
_NEVER_SECRET = frozenset({str, int, float, bool, type(None), PosixPath})


def _listed(value: Any) -> Any:
    """A set as a list in a stable order (its own follows hashing, which changes from
    one process to the next: a command line, and a cache key, must not)."""
    return sorted(value, key=str) if isinstance(value, _SET) else value


class _Option(NamedTuple):
    """One input field as the command line gives it, from its spec and ParamMeta."""

    name: str
    #: Never on the command line (a value used only by templates).
    skip: bool
    positional: bool
    #: Its words are paths (a path type, or ParamMeta(dtype=)): see :func:`_path_word`.
    path_words: bool
    flag: str
    equals: bool
    list_style: str


def _options(cab: Cab) -> tuple[_Option, ...]:
    """The cab's inputs in field order as :func:`render_argv` lays them out: worked
    out once per cab (see :meth:`Cab.kept`)."""
    options = []
    for name, spec in fields_of(cab.inputs_model).items():
        meta = cab.meta(name)
        flag = meta.flag or f"{cab.flag_prefix}{name}"
        path_words = bool(spec.path_kind or meta.dtype)
        equals = meta.style == "equals" and not meta.positional  # a word alone has no key
        options.append(
            _Option(name, meta.skip, meta.positional, path_words, flag, equals, meta.list_style)
        )
    return tuple(options)


def render_argv(cab: Cab, values: Mapping[str, Any], *, reveal: bool = False) -> list[str]:
    """The argv for ``cab`` given its resolved input values.

    A secret input (pydantic's ``SecretStr``) shows as ``**********``: that
    is the argv a dry run, a record or a report shows. Only the argv the tool
    is started with, ``reveal``, holds its value.
    """
    word = _revealed if reveal else _text
    argv = list(cab.command)
    positionals: list[str] = []
    for name, skip, positional, path_words, flag, equals, list_style in cab.kept(
        "_options", _options
    ):
        value = values.get(name)
        if value is None or (value is False and not equals) or skip:
            continue
        if isinstance(value, _SET):
            value = _listed(value)
        text = _path_word if path_words else word
        if positional:
            if isinstance(value, _SEQUENCE):
                positionals.extend(text(v) for v in value if v is not None)
            else:
                positionals.append(text(value))
            continue
        if value is True and not equals:
            argv.append(flag)
            continue
        if isinstance(value, _SEQUENCE):
            items = [text(v) for v in value if v is not None]  # None is left out, as alone
            if not items:
                continue
            if list_style == "comma":
                items = [",".join(items)]
            elif list_style == "repeat":
                for item in items:
                    argv.extend([f"{flag}={item}"] if equals else [flag, item])
                continue
            if equals:
                argv.append(f"{flag}={items[0]}")
                argv.extend(items[1:])
            else:
                argv.append(flag)
                argv.extend(items)
            continue
        if equals:
            argv.append(f"{flag}={text(value)}")
        else:
            argv.extend([flag, text(value)])
    argv.extend(positionals)
    return argv


def _path_word(value: Any) -> str:
    """A path as its command-line word: one relative path that starts with ``-``
    given as ``./-v``.

    A file called ``-v`` (or ``-rf``) given as it is would reach the tool as
    an option, positional or as an option's value (argparse reads ``--in -v``
    as a missing value); ``./-v`` is the same file and reads as no option.
    """
    if type(value) in _ONE_PATH:  # most words: no enum to unwrap, path-like
        text = str(value)
        return f"./{text}" if text.startswith("-") else text
    text = _text(value)
    return f"./{text}" if text.startswith("-") and isinstance(value, _PATH_LIKE) else text


def joined_list_problem(cab: Cab, values: Mapping[str, Any]) -> str | None:
    """What is wrong with a list ``list_style="comma"`` would join, or None.

    An element holding the comma itself would reach the tool as two
    (``["CS001,CS002", "RS106"]`` as ``CS001,CS002,RS106``): a different list,
    which nothing on the command line could tell apart, so it is refused.
    """
    for name in cab.comma_lists():
        value = _listed(values.get(name))
        if not isinstance(value, _SEQUENCE):
            continue
        for item in value:
            if item is not None and not isinstance(item, Unknown) and "," in _text(item):
                return (
                    f"input {name!r}: element {_text(item)!r} holds a comma, which"
                    " list_style='comma' joins the elements with, so the tool would read it"
                    " as more than one; split it into elements of its own, or give the field"
                    " list_style='repeat' or 'spread' if the tool takes those"
                )
    return None


def has_secret(values: Mapping[str, Any]) -> bool:
    """Whether any of ``values`` (or an element of a list of them) is a secret.

    Asked of every step (offload eligibility, dispatch), whose values are
    nearly all plain: those are passed over by type, not asked one by one."""
    for value in values.values():
        if type(value) in _NEVER_SECRET:
            continue
        if _is_secret(value) or (
            isinstance(value, _SEQUENCE) and any(_is_secret(x) for x in value)
        ):
            return True
    return False


#: What a secret's value shows as, wherever ninja shows or keeps it.
MASK = "**********"


def secret_inputs(values: Mapping[str, Any]) -> tuple[Any, ...]:
    """The secrets among ``values`` (or an element of a list of them), as the
    objects they are: a result keeps these, whose ``repr`` shows no secret."""
    found: list[Any] = []
    for value in values.values():
        if type(value) in _NEVER_SECRET:  # as has_secret: most values
            continue
        found += [item for item in _items(value) if _is_secret(item)]
    return tuple(found)


def secrets_within(value: Any) -> list[Any]:
    """Every secret at any depth of ``value``'s lists, sets, mappings and models
    (a model input's ``SecretStr`` field): for a record of the whole run, where
    :func:`secret_inputs`' one level, kept cheap for every step, is too shallow."""
    if _is_secret(value):
        return [value]
    if hasattr(value, "__pydantic_fields__"):
        value = dict(value)  # its fields as they are: a secret stays a secret object
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, (*_SEQUENCE, *_SET)):
        return [secret for item in value for secret in secrets_within(item)]
    return []


def secret_texts(secrets: Iterable[Any]) -> list[str]:
    """The text of every secret among ``secrets`` (or an element of a list of them),
    longest first: a secret that holds another is masked whole."""
    texts = {_revealed(item) for value in secrets for item in _items(value) if _is_secret(item)}
    return sorted((text for text in texts if text), key=len, reverse=True)


def masked(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` as ninja shows or keeps it (progress, ``--json``, the manifest):
    each of ``secrets`` (from :func:`secret_texts`) in it shown as :data:`MASK`,
    at any depth of lists and dicts. Another object that shows one (a path)
    becomes its masked text, as JSON writes it anyway; anything else is
    ``value`` itself, which the steps downstream are given."""
    if isinstance(value, str):
        return _masked_text(value, secrets)
    if isinstance(value, _SEQUENCE):
        return [masked(item, secrets) for item in value]
    if isinstance(value, dict):
        return {masked(key, secrets): masked(item, secrets) for key, item in value.items()}
    if value is None or isinstance(value, _NUMBER):
        return value
    text = str(value)
    shown = _masked_text(text, secrets)
    return value if shown == text else shown


def shows_secret(value: Any, secrets: Sequence[str]) -> bool:
    """Whether ``value`` (as :func:`masked` reads it) holds any of ``secrets``."""
    if isinstance(value, _SEQUENCE):
        return any(shows_secret(item, secrets) for item in value)
    if isinstance(value, dict):
        return any(shows_secret(k, secrets) or shows_secret(v, secrets) for k, v in value.items())
    if value is None or isinstance(value, _NUMBER):
        return False
    text = str(value)
    return any(secret in text for secret in secrets)


def _items(value: Any) -> Sequence[Any]:
    return value if isinstance(value, _SEQUENCE) else (value,)


def _masked_text(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:  # longest first (see secret_texts)
        text = text.replace(secret, MASK)
    return text


def _is_secret(value: Any) -> bool:
    return callable(getattr(value, "get_secret_value", None))


def revealed(value: Any) -> Any:
    """``value`` with every secret (pydantic's ``SecretStr``/``SecretBytes``) as its
    own value, at any depth of lists, mappings and models: what the tool, or a
    pystep's function, must get; anything else as it is."""
    if isinstance(value, list | tuple):
        return [revealed(v) for v in value]
    if isinstance(value, dict):
        return {k: revealed(v) for k, v in value.items()}
    if _is_secret(value):
        return value.get_secret_value()
    dump = getattr(value, "model_dump", None)  # a model's fields, its secrets as objects
    return revealed(dump()) if callable(dump) and not isinstance(value, type) else value


def _revealed(value: Any) -> str:
    """A value as the tool must get it on its command line: a secret's own text."""
    if _is_secret(value):
        secret = revealed(value)
        return os.fsdecode(secret) if isinstance(secret, bytes) else str(secret)
    return _text(value)


def _text(value: Any) -> str:
    """A value as its command-line word: an enum member is its value, and a list
    in a list its JSON.

    ``str()`` of a ``class Mode(str, Enum)`` member is ``Mode.slow`` on
    Python 3.11, a word no tool knows, though the option offered ``slow``; of
    ``[Path("a.ms")]`` it is ``[PosixPath('a.ms')]``, where JSON gives ``["a.ms"]``
    (and a list of numbers the same word as before, ``[1, 2]``).
    """
    if isinstance(value, list | tuple):
        return _NESTED_JSON.encode(value)
    if isinstance(value, os.PathLike):  # a path in a field of another type (File | int, Any)
        text = str(value)
        return f"./{text}" if text.startswith("-") else text
    return str(value.value if isinstance(value, Enum) else value)  # _enum_value, inline: per word


def _json_word(value: Any) -> Any:
    """What JSON cannot hold itself, inside a list in a list: a path as its text, an
    enum member as its value, anything else as ``str()`` of it."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value.value if isinstance(value, Enum) else str(value)


#: A list inside a list, as its word (made once: ``json.dumps`` with options makes a new
#: encoder on every call).
_NESTED_JSON = json.JSONEncoder(default=_json_word)


def _paths(value: Any) -> list[str]:
    if isinstance(value, _SET):
        value = _listed(value)
    if value is None or isinstance(value, _NO_PATH):
        return []
    if isinstance(value, _SEQUENCE):
        return [str(v) for v in value if v is not None and not isinstance(v, Unknown)]
    return [str(value)]


class _PathField(NamedTuple):
    """A field of a cab whose value names paths, as :func:`path_uses` reports them."""

    name: str
    role: PathRole
    kind: PathKind
    writable: bool
    mutable: bool
    #: Its paths are inside its value (a mapping's, a model's): :func:`paths_within`.
    nested: bool = False
    #: An output's harvest glob template: its path is the glob, filled from the inputs.
    harvest: str | None = None


def _path_fields(cab: Cab) -> tuple[tuple[_PathField, ...], tuple[_PathField, ...]]:
    """(the inputs, the outputs) whose values :func:`path_uses` reports, each in field
    order, with what it reports them as: worked out once per cab (see
    :meth:`Cab.kept`). An output sharing its name with a path input (a
    passthrough) is reported once, with the input."""
    in_fields = fields_of(cab.inputs_model)
    out_fields = fields_of(cab.outputs_model)
    inputs: list[_PathField] = []
    for name, spec in in_fields.items():
        meta = cab.meta(name)
        if not (spec.path_kind or meta.dtype):
            if spec.nested_paths:  # inside a mapping or a model: still read, keyed, mounted
                inputs.append(_PathField(name, "input", "any", meta.writable, meta.mutable, True))
            continue
        passthrough = (
            name in out_fields and out_fields[name].path_kind is not None and meta.writable
        )
        role: PathRole = "output" if passthrough else "input"
        kind = on_disk_kind(spec.path_kind, meta.dtype)
        inputs.append(_PathField(name, role, kind, meta.writable, meta.mutable))
    outputs: list[_PathField] = []
    for name, spec in out_fields.items():
        meta = cab.meta(name)
        if not (spec.path_kind or meta.dtype or meta.harvest):
            continue
        if name in in_fields and cab.is_path_input(name):
            continue  # reported with the input of its name (a passthrough)
        if meta.harvest:
            outputs.append(_PathField(name, "output", "any", True, False, harvest=meta.harvest))
            continue
        kind = on_disk_kind(spec.path_kind, meta.dtype)
        outputs.append(_PathField(name, "output", kind, True, False))
    return tuple(inputs), tuple(outputs)


def path_uses(
    cab: Cab, inputs: Mapping[str, Any], outputs: Mapping[str, Any], cwd: str
) -> tuple[PathUse, ...]:
    """Every path ``cab`` reads or writes, made absolute against ``cwd``.

    An output sharing its name with a path input (a passthrough) is reported
    once, as an output: the tool writes the path it was handed. A passthrough
    marked ``writable=False`` stays an input: the tool only hands the path on,
    and whatever protects read-only inputs (a read-only mount) must cover it.
    """
    uses: list[PathUse] = []
    # os.path.join(cwd, path) below, as prefix + path; the usual cwd told without a call
    plain = type(cwd) is str and cwd and cwd[-1] != "/"
    prefix = cwd + "/" if plain else _dir_prefix(cwd)
    in_paths, out_paths = cab.kept("_path_fields", _path_fields)
    for name, role, kind, writable, mutable, nested, _ in in_paths:
        value = inputs.get(name)
        if value is None:  # an optional path not given: nothing to walk
            continue
        if not nested and type(value) in _ONE_PATH:  # one path (most): as _paths has it
            path = str(value)
            full = path if path.startswith("/") else prefix + path
            uses.append(PathUse(full, role, name, kind, writable, mutable))
            continue
        for path in paths_within(value) if nested else _paths(value):
            # (path, role, field, kind, writable, mutable): positional is cheaper
            full = path if path.startswith("/") else prefix + path
            uses.append(PathUse(full, role, name, kind, writable, mutable))
    for name, _, kind, _, _, _, template in out_paths:
        if template is not None:
            pattern = harvest_glob(template, inputs)
            if pattern is not None:
                glob_path = anchored(cwd, pattern)  # the folder's name taken literally
                uses.append(PathUse(glob_path, "output", name, "any", pattern=True))
            continue
        for path in _paths(outputs.get(name)):
            full = path if path.startswith("/") else prefix + path
            uses.append(PathUse(full, "output", name, kind))
    return tuple(uses)


def _dir_prefix(cwd: str) -> str:
    """``os.path.join(cwd, "")``: ``cwd`` ending in one separator (``""`` stays
    ``""``), for ``os.path.join(cwd, path)`` of a relative ``path`` to be
    ``prefix + path``; told without posixpath's general join, once per step."""
    cwd = os.fspath(cwd)
    return cwd if not cwd or cwd.endswith("/") else cwd + "/"


def harvest_glob(template: str, inputs: Mapping[str, Any]) -> str | None:
    """A harvest template as the glob it collects, or None: not known yet, or
    naming an input that is not set (an optional output left absent; a required
    one :func:`~shinobi.steps.outputs.static_outputs` refused)."""
    try:
        return format_template(template, inputs, glob_pattern=True)
    except UnsetInput:
        return None


class UnsetInput(ValueError):
    """A template names an input that is not set (None): no path can be made of it.

    Filled in, it would name a file ``None-image.fits`` (or fail on ``None.stem``);
    the caller decides whether the output is then absent (an optional one) or
    the step is refused (a required one).
    """

    def __init__(self, template: str, field: str) -> None:
        self.template = template
        self.field = field
        unset = f"input {field!r}" if field.isidentifier() else f"{{{field}}}"
        super().__init__(f"cannot fill template {template!r}: {unset} is not set (give it a value)")


def format_template(
    template: str, inputs: Mapping[str, Any], *, glob_pattern: bool = False
) -> str | None:
    """``template`` filled from ``inputs``, or None when a value is not known yet.

    Each value is filled as argv gives it (an enum member as its value). One that
    is None raises :class:`UnsetInput`. With ``glob_pattern`` (a harvest
    pattern) the values are escaped for ``glob``: a prefix ``o [1]/img`` names
    that directory, not a character class, so ``{prefix}-*.fits`` still matches
    its files.
    """
    if any(isinstance(v, Unknown) for v in inputs.values()):
        names = {f for _, f, _, _ in string.Formatter().parse(template) if f}
        if any(isinstance(inputs.get(n), Unknown) for n in names):
            return None
    try:
        return (_GLOB_FILLER if glob_pattern else _FILLER).vformat(template, (), dict(inputs))
    except _Unset as exc:
        raise UnsetInput(template, exc.args[0]) from None
    except _NoKey as exc:
        root, key = exc.args
        keys = f" (its keys: {', '.join(map(repr, exc.keys)) or 'none'})" if exc.listed else ""
        raise ValueError(
            f"cannot fill template {template!r}: input {root!r} has no key {key!r}{keys}"
        ) from None
    except KeyError as exc:
        raise ValueError(
            f"cannot fill template {template!r}: input {exc.args[0]!r} has no value"
            " (wire it, or give it a default)"
        ) from exc
    except (IndexError, ValueError, AttributeError, TypeError) as exc:
        raise ValueError(f"cannot fill template {template!r}: {exc}") from exc


class _Filler(string.Formatter):
    """Fills a template as argv words are made: an enum member is its value, and
    None (an input not set) is refused rather than written as ``None``."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        root = template_root(field_name)
        if root in kwargs and kwargs[root] is None:
            raise _Unset(root)
        try:
            found = super().get_field(field_name, args, kwargs)
        except KeyError as exc:
            if root not in kwargs:
                raise  # the input itself is missing
            one_deep = field_name == f"{root}[{exc.args[0]}]"
            raise _NoKey(root, exc.args[0], kwargs[root] if one_deep else None) from None
        if found[0] is None:  # {obj.attr} whose attr is None
            raise _Unset(field_name)
        return found

    def format_field(self, value: Any, format_spec: str) -> str:
        return str(super().format_field(_enum_value(value), format_spec))


class _GlobSafe(_Filler):
    """Fills a template with each value escaped for glob; the template's own
    wildcards stay wildcards."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return glob.escape(super().format_field(value, format_spec))


class _Unset(Exception):
    """Raised by :class:`_Filler` for the field that is None (the template is
    added where it is known)."""


class _NoKey(Exception):
    """Raised by :class:`_Filler` for ``{d[k]}`` whose input ``d`` is there but has
    no key ``k``: the key is what is missing, not an input named ``k``."""

    def __init__(self, root: str, key: Any, value: Any) -> None:
        super().__init__(root, key)
        #: The keys it has, when the missing key is one of the input's own.
        self.listed = isinstance(value, Mapping)
        self.keys = list(value) if isinstance(value, Mapping) else []


_FILLER = _Filler()
_GLOB_FILLER = _GlobSafe()


def _enum_value(value: Any) -> Any:
    """An enum member as its value, as on the command line (see :func:`_text`)."""
    return value.value if isinstance(value, Enum) else value
