"""Recipe inputs as command-line options, for every command that takes a target.

A command built on :class:`RecipeCommand` takes ``FILE.py:NAME`` as its first
argument; the recipe is loaded while the arguments are parsed and each field
of its inputs model becomes a typed option (``--target /tmp/x``; a list field
is given by repeating the option). ``ninja run FILE.py:NAME --help`` therefore
documents the recipe's own inputs, from the fields' descriptions.
"""

from __future__ import annotations

import collections
import itertools
import typing
from pathlib import Path
from typing import Any

import click

from shinobi.cli import collector
from shinobi.wording import input_option

__all__ = ["RECIPE_COMMAND_OPTIONS", "TARGET_KEY", "RecipeCommand", "recipe_values"]

_RECIPE_KEY = "shinobi_recipe"
#: Where the loaded FILE.py:NAME is kept, for messages that point at its --help.
TARGET_KEY = "shinobi_target"
_INPUTS_KEY = "shinobi_inputs"
#: The flag (``--no-NAME``, one for each spelling) that gives a list input with a
#: default as empty.
_EMPTIED_KEY = "shinobi_inputs_emptied"
_ABOUT_KEY = "shinobi_about"


class _Json(click.ParamType):
    """A value with structure (a mapping, a model, a list in a list): given on the
    command line as JSON. ``core`` is its type, which the example in a refusal
    follows: a list input's example is a list, not a mapping."""

    name = "json"

    def __init__(self, core: Any = dict) -> None:
        self.core = core

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        import json

        try:
            return json.loads(value)
        except ValueError as exc:
            each = "each value" if getattr(param, "multiple", False) else "it"
            example = _json_example(self.core)
            self.fail(f"{value!r} is not JSON ({exc}); give {each} as JSON, e.g. '{example}'")


def _json_example(core: Any) -> str:
    """A JSON value of type ``core``, for a message: ``["a", "b"]`` for a list of
    text, ``{"a": 1}`` for a mapping, ``{"FIELD": ...}`` for a model."""
    import json

    origin = typing.get_origin(core) or core
    args = typing.get_args(core)
    if origin in (list, tuple, set, frozenset):
        item = args[0] if args else str
        return json.dumps([_json_item(item, 1), _json_item(item, 2)])
    fields = getattr(core, "model_fields", None)
    if fields:
        name, info = next(iter(fields.items()))
        return json.dumps({name: _json_item(info.annotation, 1)})
    return json.dumps({"a": _json_item(args[1] if len(args) == 2 else int, 1)})


def _json_item(kind: Any, n: int) -> Any:
    """The ``n``th example value of ``kind``: a number for a number, else text."""
    import json

    if kind is bool:
        return n == 1
    if kind in (int, float):
        return kind(n)
    if typing.get_origin(kind) in (list, dict) or hasattr(kind, "model_fields"):
        return json.loads(_json_example(kind))
    return "ab"[n - 1]


class _PathValue(click.ParamType):
    """A path given on the command line: any text but the empty string.

    pydantic reads ``""`` as ``Path(".")``, so ``--out ""`` (an unset shell
    variable) would silently name the current directory.
    """

    name = "path"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "":
            self.fail("an empty path names no file; give a path (use . for this directory)")
        return value


class _LiteralChoice(click.Choice):
    """A ``Literal[...]`` input: chosen by its text, passed on as the literal itself.

    pydantic compares a literal strictly, so ``"2"`` for ``Literal[1, 2]`` would
    be refused as "Input should be 1 or 2" although 2 was given.
    """

    def __init__(self, values: tuple[Any, ...]) -> None:
        self.values = {str(v): v for v in values}
        super().__init__(list(self.values))

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return self.values[super().convert(str(value), param, ctx)]


class _UnionText(click.ParamType):
    """A union with a number or a bool among its members (``float | str``,
    ``int | Literal["auto"]``, ``File | int``): the text typed made the value
    it spells, so pydantic picks the member it would for that value in Python.

    Left as text, ``--threshold 3`` for ``float | str`` reached the function as
    ``"3"`` (pydantic's union takes text as text first), while ``run_recipe``
    with 3 gave 3.0; ``--d 1`` for ``bool | int`` became True. Text that
    spells an integer is an int when a member takes ints, a number a float
    when one takes floats, ``true``/``false`` a bool when one takes bools;
    anything else stays text.
    """

    def __init__(self, members: tuple[Any, ...]) -> None:
        self.members = tuple(_unannotated(m) for m in members)
        self.name = "|".join(_member_name(m) for m in members)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text[:1] in ("[", "{") and any(_structured(m) for m in self.members):
            import json

            try:  # a list or a mapping member, given as JSON as such an input is
                return json.loads(text)
            except ValueError:
                pass
        if int in self.members or float in self.members:
            try:
                number: int | float = int(text, 10)
            except ValueError:
                try:
                    number = float(text)
                except ValueError:
                    pass
                else:
                    if float in self.members:
                        return number
            else:
                return number if int in self.members else float(number)
        if bool in self.members and text.lower() in ("true", "false"):
            return text.lower() == "true"
        return value


def _member_name(member: Any) -> str:
    """How ``--help`` names one member of a union: as click names its own types."""
    from shinobi.steps.types import PathType

    marks = typing.get_args(member)[1:] if typing.get_origin(member) is typing.Annotated else ()
    kind = next((m.kind for m in marks if isinstance(m, PathType)), None)
    member = _unannotated(member)
    names = {int: "INTEGER", float: "FLOAT", bool: "BOOLEAN", str: "TEXT"}
    if member in names:
        return names[member]
    if isinstance(member, type) and issubclass(member, Path):
        return {"file": "FILE", "dir": "DIRECTORY", "ms": "MS"}.get(kind or "", "PATH")
    if typing.get_origin(member) is typing.Literal:
        return "|".join(str(v) for v in typing.get_args(member))
    if _structured(member):
        return "JSON"
    return getattr(member, "__name__", "VALUE").upper()


def _scalar_union(core: Any) -> tuple[Any, ...] | None:
    """The members of a union other than None when one of them is int, float or
    bool (a number or a flag typed as text must become one); else None."""
    import types

    if typing.get_origin(core) not in (typing.Union, types.UnionType):
        return None
    members = tuple(m for m in typing.get_args(core) if m is not type(None))
    return members if any(_unannotated(m) in (int, float, bool) for m in members) else None


def _unannotated(annotation: Any) -> Any:
    """``annotation`` without its ``Annotated`` metadata (a ``File`` is a Path)."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


class _CountedOption(click.Option):
    """An input option given a set number of times: once for a single value, N
    times for a fixed-length tuple (``tuple[int, int]``).

    click keeps the last of a repeated single-valued option, so
    ``--target a.ms --target b.ms`` would drop ``a.ms`` without a word; and a
    tuple given too few values was refused as "input 'pair.1': Field required".
    Every value the command line gives is collected, and a wrong count refused.
    A flag is counted the same way, each spelling kept as given: a bool's
    ``--flag --no-flag`` would otherwise keep the last without a word, and a
    list's ``--no-ms --no-ms`` pass as if given once.
    """

    def __init__(self, *args: Any, exactly: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exactly = exactly

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        if self.is_bool_flag:
            # each spelling collected as itself, so the refusal can say which were given
            for spelling in (*self.opts, *self.secondary_opts):
                parser.add_option(
                    obj=self, opts=[spelling], dest=self.name, action="append_const", const=spelling
                )
        elif self.multiple:
            super().add_to_parser(parser, ctx)
        else:  # a single value collected as a list's are: a repeat is seen, not overwritten
            parser.add_option(obj=self, opts=self.opts, dest=self.name, action="append", nargs=1)

    def type_cast_value(self, ctx: click.Context, value: Any) -> Any:
        if isinstance(self.type, _Elements) and value:  # each value by its element's type
            return self.type.convert_each(value, self, ctx)
        return super().type_cast_value(ctx, value)

    def process_value(self, ctx: click.Context, value: Any) -> Any:
        if isinstance(value, list) and value and len(value) != self.exactly:
            raise click.UsageError(self._wrong_count(value), ctx)
        if isinstance(value, list) and not self.multiple:
            value = value[0] if value else None
            if self.is_bool_flag and value is not None:  # the spelling given: --no-x is off
                value = value not in self.secondary_opts
        return super().process_value(ctx, value)

    def _wrong_count(self, given: list[Any]) -> str:
        """What was wrong with how often the option was given, and what to do."""
        name = self.opts[0]
        shown = ", ".join(repr(v) for v in given)
        if self.is_bool_flag:
            spellings = "/".join((name, *self.secondary_opts[:1]))
            return (
                f"option {spellings} may be given once, but was given {len(given)} times"
                f" ({', '.join(given)}); give it once"
            )
        if self.exactly == 1:
            return (
                f"option {name} takes one value, but was given {len(given)} ({shown}); give it once"
            )
        return (
            f"option {name} takes exactly {self.exactly} values, but was given {len(given)}"
            f" ({shown}); give it {self.exactly} times, once for each value"
        )


def _fixed_length(annotation: Any) -> int | None:
    """How many values a fixed-length tuple field takes (``tuple[int, int]``: 2);
    None for any other type, a ``tuple[int, ...]`` included."""
    from shinobi.steps.types import tuple_elements

    elements = tuple_elements(annotation)
    return None if elements is None else len(elements)


def _structured(core: Any) -> bool:
    """Whether one value of this type has structure, so is given as JSON: a
    mapping, a model, or a list inside a list (each ``--xss '[1, 2]'``)."""
    origin = typing.get_origin(core)
    return (
        core is dict
        or origin in (dict, list, tuple, set, frozenset)
        or core in (list, tuple, set, frozenset)
        or hasattr(core, "model_fields")
    )


def _click_type(annotation: Any) -> tuple[Any, bool, bool]:
    """(click type, is_list, is_bool) for a pydantic field annotation."""
    from shinobi.steps.types import tuple_elements, unwrap_annotation

    elements = tuple_elements(annotation)
    if elements is not None and any(e != elements[0] for e in elements):
        return _Elements(elements), True, False
    core, _, is_list = unwrap_annotation(annotation, [])
    if _structured(core):
        return _Json(core), is_list, False
    if typing.get_origin(core) is typing.Literal:
        return _LiteralChoice(typing.get_args(core)), is_list, False
    if _enum_of(core, str):  # its values are what pydantic reads from the command line
        return click.Choice([member.value for member in core]), is_list, False
    if _enum_of(core, object):  # numbers (an IntEnum, floats) or mixed: handed on as values
        return _LiteralChoice(tuple(member.value for member in core)), is_list, False
    if core is bool:
        return click.BOOL, is_list, not is_list
    if core is int:
        return click.INT, is_list, False
    if core is float:
        return click.FLOAT, is_list, False
    if isinstance(core, type) and issubclass(core, Path):
        return _PathValue(), is_list, False
    shape = _time_shape(core)
    if shape is not None:
        return _Shaped(shape), is_list, False
    members = _scalar_union(core)
    if members is not None:
        return _UnionText(members), is_list, False
    return click.STRING, is_list, False


def _element_type(annotation: Any) -> Any:
    """The click type of one element of a tuple: one value, so a list there is
    given as JSON (each ``--pair '[1, 2]'``), as a list in a list is."""
    ctype, is_list, _ = _click_type(annotation)
    return _Json(annotation) if is_list else ctype


class _Elements(click.ParamType):
    """A fixed-length tuple whose elements differ in type (``tuple[Literal["briggs",
    "natural"], float]``), given as a homogeneous one is (``--weight briggs
    --weight 0.5``): each value converted by its own element's type, where one
    type for all refused ``0.5`` as no weighting. :class:`_CountedOption` hands
    over the values together, once their count is right."""

    name = "values"

    def __init__(self, annotations: tuple[Any, ...]) -> None:
        self.annotations = annotations
        self.types = tuple(_element_type(a) for a in annotations)

    def convert_each(
        self, values: list[Any], param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[Any, ...]:
        return tuple(self._element(i, value, param, ctx) for i, value in enumerate(values))

    def _element(
        self, index: int, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Any:
        try:
            return self.types[index].convert(value, None, ctx)  # one value, not the option's
        except click.BadParameter as exc:
            self.fail(f"value {index + 1} of {len(self.types)}: {exc.message}", param, ctx)

    def metavars(self) -> list[str]:
        """Each element's metavar, in order, as ``--help`` shows them."""
        return [
            _metavar("value", t, a, []) for t, a in zip(self.types, self.annotations, strict=True)
        ]


def _time_shape(core: Any) -> str | None:
    """How a date, time or duration input is written, for ``--help`` (None: not one).

    pydantic reads these from ISO 8601 text; without the shape a user guesses
    at ``01/12/2026`` and is told so only after typing it.
    """
    import datetime

    shapes = (  # datetime before date: a datetime is a date too
        (datetime.datetime, "YYYY-MM-DDTHH:MM[:SS]"),
        (datetime.date, "YYYY-MM-DD"),
        (datetime.time, "HH:MM[:SS]"),
        (datetime.timedelta, "SECONDS|PnDTnHnMnS"),
    )
    if not isinstance(core, type):
        return None
    return next((shape for kind, shape in shapes if issubclass(core, kind)), None)


class _Shaped(click.ParamType):
    """Text of a known shape (a date, a duration), handed to pydantic as it is; a
    duration given as a number of seconds goes as the number, which pydantic
    reads as seconds (its text it refuses)."""

    name = "text"

    def __init__(self, shape: str) -> None:
        self.shape = shape

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and self.shape.startswith("SECONDS"):
            try:
                return float(value)
            except ValueError:
                return value
        return value


def _enum_of(core: Any, kind: type) -> bool:
    """Whether ``core`` is an Enum whose every value is a ``kind`` (a bool is no int)."""
    import enum

    return (
        isinstance(core, type)
        and issubclass(core, enum.Enum)
        and all(
            isinstance(member.value, kind) and not isinstance(member.value, bool) for member in core
        )
    )


#: How ``Field(ge=, gt=, le=, lt=)`` bounds read in ``--help``.
_BOUND_WORDS = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "less than"}


def _bounds(metadata: list[Any]) -> str:
    """``(at least 1, at most 10)`` for a field's declared bounds, or ``""``: a wrong
    value is refused with them, so ``--help`` says them before it is typed."""
    said = [
        f"{words} {getattr(item, name)}"
        for item in metadata
        for name, words in _BOUND_WORDS.items()
        if getattr(item, name, None) is not None
    ]
    return f"({', '.join(said)})" if said else ""


def _first_target(args: list[str], command: click.Command) -> str | None:
    takes_value = {
        opt
        for param in command.params
        if isinstance(param, click.Option) and not param.is_flag
        for opt in param.opts
    }
    skip = False
    for at, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--":  # what follows is no option: `ninja run -- -r.py:pipe`
            return args[at + 1] if at + 1 < len(args) else None
        if arg.startswith("-"):
            skip = arg in takes_value
            continue
        return arg
    return None


def _load_libraries() -> None:
    """What a recipe command imports before the recipe: the loader, and the
    configuration every recipe command reads (its models load pydantic)."""
    import shinobi.config
    import shinobi.loaders  # noqa: F401


def _refuse_swallowed_options(command: click.Command, ctx: click.Context, args: list[str]) -> None:
    """Refuse ``--target --dryrun``: an option left without its value.

    click gives an option that takes a value the next word, even when that
    word is another of the command's options, so a forgotten value would turn
    ``--dryrun`` into a file name and the dry run into a real run. A value
    that really is such a word can still be given as ``--target=--dryrun``.
    """
    options = [p for p in command.get_params(ctx) if isinstance(p, click.Option)]
    names = {name for p in options for name in (*p.opts, *p.secondary_opts)}
    takes_value = {name: p for p in options if not p.is_flag and not p.count for name in p.opts}
    # a short one with its value run on (-bdocker, -j2) is that option as well
    attached = tuple(n for n in takes_value if len(n) == 2 and n[0] == "-" and n[1] != "-")
    for current, following in itertools.pairwise(args):
        if current == "--":
            return
        if current in takes_value and (
            following.split("=", 1)[0] in names or following.startswith(attached)
        ):
            # a choice cannot be an option's name; a long option can take one after "="
            literal = current.startswith("--") and not isinstance(
                takes_value[current].type, click.Choice
            )
            hint = f" (or write {current}={following} if that is the value)" if literal else ""
            raise click.UsageError(
                f"option {current} needs a value, but is followed by the option {following};"
                f" give {current} a value{hint}",
                ctx,
            )


#: The options of every command that takes a recipe's inputs (``run``,
#: ``compile``, ``graph``), kept off the inputs in all of them, so that an input
#: has one spelling in every command: ``b`` is ``--input-b`` under ``run`` (for
#: its ``-b``) and under ``compile`` too, and an input ``submit`` is
#: ``--input-submit`` under ``run`` as it must be under ``compile``, where
#: ``--submit`` is compile's own (given there, it submitted and left the input
#: unset). A test holds this to the commands' options.
RECIPE_COMMAND_OPTIONS = frozenset(
    {
        "--backend",
        "--container-runtime",
        "--dry-run",
        "--dryrun",
        "--engine",
        "--explain",
        "--format",
        "--json",
        "--max-workers",
        "--no-cache",
        "--no-provenance",
        "--output",
        "--provenance",
        "--submit",
        "--workdir",
        "-b",
        "-j",
        "-o",
    }
)


def _refuse_repeated_options(command: click.Command, ctx: click.Context, args: list[str]) -> None:
    """Refuse one of the command's own options given twice (``-b docker -b native``,
    ``--provenance --no-provenance``; a plain flag twice says one thing).

    click keeps the last, and the first was dropped unsaid, where a recipe
    input given twice is refused (see :func:`recipe_values`). A command line
    click cannot parse is left to the parse that follows, which says what is
    wrong with it."""
    try:
        _, _, order = command.make_parser(ctx).parse_args(args=list(args))
    except click.UsageError:
        return
    counts = collections.Counter(id(param) for param in order)
    for param in order:
        if (
            isinstance(param, click.Option)
            and counts[id(param)] > 1
            and not (param.multiple or param.count or param.is_eager)
            and not (param.is_flag and not param.secondary_opts)  # --dryrun twice says one thing
            and not (param.name or "").startswith(_INPUTS_KEY)
        ):
            names = "/".join((*param.opts, *param.secondary_opts))
            raise click.UsageError(
                f"option {names} is given {counts[id(param)]} times; give it once", ctx
            )


class RecipeCommand(click.Command):
    """A command whose options include the target recipe's inputs."""

    #: Whether the command uses the inputs' values: ``ninja graph`` runs nothing,
    #: so its ``--help`` must not mark an input without a default [required].
    needs_inputs: typing.ClassVar[bool] = True

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # The command object outlives one invocation (tests, embedding): drop the
        # options the previous target added before adding this target's.
        self.params = [p for p in self.params if not (p.name or "").startswith(_INPUTS_KEY)]
        target = _first_target(args, self)
        if target is not None and (":" in target or target.endswith(".py")):
            collector.freeze_libraries(_load_libraries)  # before the first code of the user's
            from shinobi.loaders import load_target
            from shinobi.runner import as_recipe, refuse_ambiguous_aliases

            # a single cab or pystep as the recipe that runs it: its options are
            # that recipe's inputs (a list for each field the step scatters over)
            step = load_target(target)
            recipe = as_recipe(step)
            refuse_ambiguous_aliases(recipe)  # before --help shows two options for one key
            ctx.meta[_RECIPE_KEY] = recipe
            ctx.meta[TARGET_KEY] = target
            ctx.meta[_ABOUT_KEY] = _about(step, target, self.needs_inputs)
            self.params = [*self.params, *self._input_options(recipe, ctx)]
        try:
            _refuse_swallowed_options(self, ctx, args)
            _refuse_repeated_options(self, ctx, args)
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            from shinobi.cli.main import GLOBAL_OPTIONS

            named = exc.option_name
            renamed = f"--input-{named[2:]}"
            if named.startswith("--") and any(
                renamed in getattr(p, "opts", ()) for p in self.params
            ):
                raise click.UsageError(
                    f"No such option {named!r}: the recipe's input is {renamed} here ({named}"
                    " is too near one of ninja's own options)",
                    ctx,
                ) from None
            said_by_main = (*GLOBAL_OPTIONS, "--remote")  # "put it first", "planned"
            if _RECIPE_KEY in ctx.meta or not named.startswith("--") or named in said_by_main:
                exc.ctx = exc.ctx or ctx  # ninja's own options: "put it first", said by main
                raise
            message = exc.format_message().rstrip(".")
            raise click.UsageError(
                f"{message}; a recipe's inputs go after FILE.py:NAME", exc.ctx or ctx
            ) from None
        except click.UsageError as exc:
            exc.ctx = exc.ctx or ctx  # click's parser leaves some of its errors without one
            raise

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command's own text, then what the named recipe says about itself."""
        super().format_help_text(ctx, formatter)
        about = ctx.meta.get(_ABOUT_KEY)
        if about:
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write_text(about)

    def invoke(self, ctx: click.Context) -> Any:
        from shinobi.errors import InputError, UsageError

        try:
            return super().invoke(ctx)
        except InputError as exc:  # said with the option that sets the input
            param = self._param_of(exc.field.split(".", 1)[0]) if exc.field else None
            shown = f" ({param.opts[0]})" if param is not None else ""
            shape = getattr(param.type, "shape", None) if param is not None else None
            written = f" (write it as {shape})" if shape else ""
            raise UsageError(
                f"recipe {exc.recipe!r}, {exc.subject}{shown}: {exc.problem}{written}"
            ) from None

    def _param_of(self, field: str) -> click.Parameter | None:
        for param in self.params:
            name = (param.name or "").partition(":")[2]
            if (
                name
                and param.opts
                and field in (name, _input_key(self._model(), name), _alias(self._model(), name))
            ):
                return param
        return None

    def _model(self) -> Any:
        ctx = click.get_current_context(silent=True)
        recipe = ctx.meta.get(_RECIPE_KEY) if ctx is not None else None
        return recipe.inputs_model if recipe is not None else None

    def _input_options(self, recipe: Any, ctx: click.Context) -> list[click.Option]:
        # --help is not among the params yet (click adds it when it parses); a
        # flag's second name (--no-provenance) is the command's too, or an input
        # `no_provenance` would take it over
        own = {
            opt
            for p in self.params
            for opt in (*getattr(p, "opts", []), *getattr(p, "secondary_opts", []))
        }
        own.update(ctx.help_option_names)
        own.update(RECIPE_COMMAND_OPTIONS)
        # the command's own names as a typist confuses them: an input `dry_run` spelt
        # `--dry_run` is one keystroke from --dry-run, and must not run for real
        ours = {_loose(option) for option in own if option.startswith("-")}
        # each field's click type and default, worked out once (a default may be a
        # factory's product)
        fields = [
            (name, info, *_click_type(info.annotation), _given_default(info))
            for name, info in recipe.inputs_model.model_fields.items()
        ]
        # The --no-NAME that empties a list input with values by default, kept for it
        # whatever the field order: an input `no_x` declared before `x` took it.
        emptying = {
            f"--no-{name.replace('_', '-')}"
            for name, info, _, is_list, _, default in fields
            if _emptiable(info, is_list, default)
        }
        options: list[click.Option] = []
        for name, info, ctype, is_list, is_bool, default in fields:
            # `json_` is how a model says `json` without shadowing BaseModel.json
            dashed = input_option(name)
            emptiable = _emptiable(info, is_list, default)
            exactly = _fixed_length(info.annotation) if is_list else 1
            # a bool's --no-NAME is its own too, as is such a list's: `cache` must
            # not take ninja's --no-cache, nor lose its own
            mine = _negated(dashed) if emptiable else None
            taken = own | (emptying - {mine})  # the command's, or another input's
            negatable = is_bool or emptiable
            while not _free(dashed, negatable, taken) or _near(dashed, negatable, ours):
                dashed = "--input-" + dashed[2:]
            names = [dashed]
            alias = _alias(recipe.inputs_model, name)
            # spelt by its field's name and its alias too, whatever its type; each
            # spelling of a bool or an emptiable list has its --no- form, so that
            # form must be free as well
            for spelling in dict.fromkeys([name, *([alias] if alias else [])]):
                option = "--" + spelling
                if (spelling == alias and not _free(option, negatable, taken)) or _near(
                    option, negatable, ours
                ):
                    option = "--input-" + spelling  # the command's: an input's own name
                if option not in names and _free(option, negatable, taken):
                    names.append(option)
            own.update(names)
            required = info.is_required()
            # an emptiable list's --no- forms, one for each of its names (--no-antList too)
            negations = [n for n in map(_negated, names) if emptiable and n not in own]
            negated = _negated(dashed)
            emptied = negated in negations  # the one --help and the refusals name
            if is_bool:  # each of its names has its --no- form, as --help lists them
                own.update(_negated(n) for n in names)
            own.update(negations)
            help_text = " ".join(x for x in (info.description, _bounds(info.metadata)) if x)
            if is_list and exactly is not None:
                each = f"exactly {exactly} values: repeat the option for each"
                help_text = f"{help_text} ({each})".strip()
            elif is_list:
                help_text = f"{help_text} (repeat the option for each value)".strip()
            if emptied:
                help_text = f"{help_text}; {negated} for none".strip()
            if _has_values(default):
                help_text = f"{help_text} [default: {default}]".strip()
            if required and self.needs_inputs:
                help_text = f"{help_text} [required]".strip()
            if is_bool:  # each name a flag of its own: an alias (--dryRun) as well
                flags = [f"{n}/{_negated(n)}" for n in names]
                option = _CountedOption(flags, exactly=1, default=None, help=help_text)
            else:
                option = _option(
                    names,
                    ctype,
                    is_list,
                    exactly,
                    help_text,
                    _metavar(name, ctype, info.annotation, info.metadata, dashed),
                )
            option.name = f"{_INPUTS_KEY}:{name}"
            options.append(option)
            if emptied:  # given once, as the bool's --no-NAME is
                empty = _CountedOption(
                    negations, exactly=1, is_flag=True, default=False, hidden=True
                )
                empty.name = f"{_EMPTIED_KEY}:{name}:{dashed[2:]}"
                options.append(empty)
        return options


def _negated(option: str) -> str:
    """A flag's off spelling: ``--no-dry-run`` for ``--dry-run``."""
    return f"--no-{option[2:]}"


def _loose(option: str) -> str:
    """An option's name as someone typing it may confuse it: case, dashes and
    underscores aside (``--dry_run``, ``--dryRun`` and ``--dry-run`` alike)."""
    return option.lower().replace("-", "").replace("_", "")


def _near(option: str, negatable: bool, ours: set[str]) -> bool:
    """Whether ``option`` (or, for a flag, its ``--no-`` form) is one of the command's
    own options spelt another way; ``ours`` holds those as :func:`_loose` makes them."""
    return _loose(option) in ours or (negatable and _loose(_negated(option)) in ours)


def _free(option: str, negatable: bool, taken: set[str]) -> bool:
    """Whether ``option`` is no other option's name, nor, for a flag that has a
    ``--no-`` form (a bool, a list that can be emptied), is that form."""
    return option not in taken and not (negatable and _negated(option) in taken)


def _option(
    names: list[str], ctype: Any, is_list: bool, exactly: int | None, help_text: str, metavar: str
) -> click.Option:
    """An input's option: a list's is given any number of times; a single value's
    once and a fixed-length tuple's N times, each refused given another count."""
    settings: dict[str, Any] = {
        "type": ctype,
        "multiple": is_list,
        "default": None,
        "help": help_text,
        "metavar": metavar,
    }
    if exactly is None:
        return click.Option(names, **settings)
    return _CountedOption(names, exactly=exactly, **settings)


def _emptiable(info: Any, is_list: bool, default: Any) -> bool:
    """Whether a list input has a ``--no-NAME`` that gives it as empty: one with
    values by default, or one without a default (repeating its option gives one
    value at least, and an empty list is a value the step may well take), unless
    it may not be empty at all (:func:`_may_be_empty`)."""
    return is_list and (_has_values(default) or info.is_required()) and _may_be_empty(info)


def _may_be_empty(info: Any) -> bool:
    """Whether a list input may be given as empty (``--no-NAME``): not a fixed-length
    tuple, nor a list declared to hold at least one value (``min_length=1``)."""
    if _fixed_length(info.annotation) is not None:
        return False
    return not any((getattr(item, "min_length", 0) or 0) > 0 for item in info.metadata)


def _about(step: Any, target: str, needs_inputs: bool = True) -> str:
    """What ``--help`` says about the target: its kind and name, what it says about
    itself (a Recipe's or Cab's ``description``, a pystep's docstring), where
    its inputs are among the options, and whether this command needs them."""
    import inspect

    text = getattr(step, "description", None)
    if not text and callable(getattr(step, "fn", None)):
        text = inspect.getdoc(step.fn)
    kind = _KINDS.get(getattr(step, "kind", ""), "step")
    about = " ".join((text or "").split()).rstrip(".")
    head = f"{target} is the {kind} {getattr(step, 'name', '')!r}" + (
        f": {about}." if about else "."
    )
    where = "Its inputs are the options after this command's own, below"
    if not needs_inputs:
        return f"{head} {where}; all are optional here, as this command runs nothing."
    return f"{head} {where}."


_KINDS = {"recipe": "recipe", "cab": "cab", "python": "pystep", "function": "step"}


def _metavar(name: str, ctype: Any, annotation: Any, metadata: list[Any], option: str = "") -> str:
    """What the option takes, as ``--help`` shows it: ``[fast|slow]`` for a choice
    (``MODE`` would hide the values), ``INTEGER``, ``FILE``, ``JSON``... A tuple
    of mixed types shows each value as it is given: ``--box INTEGER --box TEXT``
    (``option`` is its name)."""
    if isinstance(ctype, _Elements):
        return f" {option} ".join(ctype.metavars())
    if isinstance(ctype, click.Choice):
        return "[" + "|".join(str(c) for c in ctype.choices) + "]"
    if isinstance(ctype, _Json):  # a mapping, a model, a list in a list: typed as JSON
        return "JSON"
    if isinstance(ctype, _Shaped):
        return ctype.shape
    if isinstance(ctype, _UnionText):
        return ctype.name
    if isinstance(ctype, _PathValue):
        from shinobi.steps.types import PathType, unwrap_annotation

        marks = unwrap_annotation(annotation, list(metadata))[1]
        kind = next((m.kind for m in marks if isinstance(m, PathType)), None)
        return {"file": "FILE", "dir": "DIRECTORY", "ms": "MS"}.get(kind or "", "PATH")
    known = {click.INT: "INTEGER", click.FLOAT: "FLOAT", click.BOOL: "BOOLEAN"}
    return known.get(ctype, "TEXT" if ctype is click.STRING else name.upper())


def _input_key(model: Any, name: str) -> str:
    """The key the inputs model reads field ``name`` from: its alias, if it has one.

    A pydantic model validates by alias, so a value keyed by the field's own
    name would be dropped without a word and the default used instead.
    """
    config = getattr(model, "model_config", {})
    if config.get("validate_by_name") or config.get("populate_by_name"):
        return name
    return _alias(model, name) or name


def _alias(model: Any, name: str) -> str | None:
    """Field ``name``'s alias, a name of its own on the command line (``--nMax``)."""
    info = getattr(model, "model_fields", {}).get(name)
    if info is None:
        return None
    alias = info.validation_alias if info.validation_alias is not None else info.alias
    choices = getattr(alias, "choices", None)  # AliasChoices: its first plain name
    if choices:
        alias = next((c for c in choices if isinstance(c, str)), None)
    return alias if isinstance(alias, str) else None


def _given_default(info: Any) -> Any:
    """A field's default as ``--help`` shows it; None for a required field."""
    return None if info.is_required() else _shown_default(info)


def _has_values(default: Any) -> bool:
    """Whether a shown default says something (not None, nor empty)."""
    return default not in (None, "", [], ())


def _shown_default(info: Any) -> Any:
    """A field's default as ``--help`` shows it: a factory's product, as typed."""
    try:
        default = info.get_default(call_default_factory=True)
    except Exception:  # the recipe's own factory failed (or needs the other inputs)
        return "computed when the recipe runs"  # its run says what went wrong
    return _as_typed(default)


def _as_typed(value: Any) -> Any:
    """``value`` as it would be typed on the command line: a path as its text, a
    list as its items, a model as the JSON the option takes."""
    import datetime
    import enum
    import os

    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, datetime.timedelta):  # as --help says durations are typed
        return f"{value.total_seconds():.15g}"  # whole: :g rounded 1234567 to 1.23457e+06
    if isinstance(value, list | tuple | set | frozenset):
        import shlex

        # quoted as a shell would need it: ["a b", "c"] showed as `a b c`, three values
        return " ".join(shlex.quote(_one_value(item)) for item in value)
    dump = getattr(value, "model_dump_json", None)
    if callable(dump):
        return dump()
    if isinstance(value, dict):
        return _one_value(value)
    return value


def _one_value(value: Any) -> str:
    """One value as its option takes it: structure (a list in a list, a mapping) as JSON."""
    import json

    if isinstance(value, list | tuple | set | frozenset | dict):
        return json.dumps(value, default=str)
    return str(_as_typed(value))


def recipe_values(ctx: click.Context, params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The loaded recipe and the input values given on the command line.

    Consumes the recipe-input entries of ``params`` so the command's own
    keyword arguments stay its own.
    """
    from shinobi.errors import UsageError

    recipe = ctx.meta.get(_RECIPE_KEY)
    if recipe is None:
        raise UsageError("name a recipe as FILE.py:NAME (e.g. examples/offload_demo.py:pipe)")
    values: dict[str, Any] = {}
    model = getattr(recipe, "inputs_model", None)
    for key in [k for k in params if k.startswith(f"{_INPUTS_KEY}:")]:
        value = params.pop(key)
        if value is None or value == ():
            continue
        name = _input_key(model, key.split(":", 1)[1])
        values[name] = list(value) if isinstance(value, tuple) else value
    for key in [k for k in params if k.startswith(f"{_EMPTIED_KEY}:")]:
        _, field, dashed = key.split(":")
        if not params.pop(key):
            continue
        name = _input_key(model, field)
        if name in values:
            raise UsageError(f"give --{dashed} values or --no-{dashed}, not both")
        values[name] = []
    return recipe, values
