"""Cabs: a command-line tool described by the schemas of what it takes and makes."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

    from shinobi.resources import Resources

__all__ = ["Cab", "OutputRule", "ParamMeta", "Wrangler", "template_root"]

_Fact = TypeVar("_Fact")


def template_root(field_name: str) -> str:
    """The input a template field names: ``ms`` of ``ms.stem`` or ``ms[0]``."""
    return re.split(r"[.\[]", field_name, maxsplit=1)[0]


#: How an output gets its value (see :meth:`Cab.output_rules`).
OutputRule = Literal["passthrough", "implicit", "after", "default"]


@dataclass(frozen=True, slots=True)
class ParamMeta:
    """How one field of a cab appears on the command line and on disk.

    Inputs:
        positional: passed without a flag, after every option, in field order.
        flag: the option's spelling (default: the cab's ``flag_prefix`` + field name).
        style: ``"space"`` gives ``--flag value``; ``"equals"`` gives ``--flag=value``.
        list_style: a list as ``"repeat"`` (``--f a --f b``), ``"spread"``
            (``--f a b``) or ``"comma"`` (``--f a,b``).
        skip: never on the command line (a value used only by templates).
        mutable: the tool rewrites this input in place (an MS it calibrates).
        writable: ``False`` promises the tool never writes this path; container
            backends mount it read-only.
        dtype: ``"File"``, ``"Directory"`` or ``"MS"`` for a field typed as str.
    Outputs:
        implicit: a template over the inputs naming the path the tool writes,
            e.g. ``"{prefix}-image.fits"``; known before the step runs.
        harvest: a glob template collected after the step ran.
    """

    positional: bool = False
    flag: str | None = None
    style: Literal["space", "equals"] = "space"
    list_style: Literal["repeat", "spread", "comma"] = "repeat"
    skip: bool = False
    mutable: bool = False
    writable: bool = True
    dtype: Literal["File", "Directory", "MS"] | None = None
    implicit: str | None = None
    harvest: str | None = None

    def __post_init__(self) -> None:
        _one_of("ParamMeta", "style", self.style, ("space", "equals"))
        _one_of("ParamMeta", "list_style", self.list_style, ("repeat", "spread", "comma"))
        _one_of("ParamMeta", "dtype", self.dtype, (None, "File", "Directory", "MS"))


def _takes_a_bool(annotation: Any) -> bool:
    """Whether ``annotation`` (or what a list of it holds) admits a bool besides other
    values: ``bool | int``, ``Literal[True, False]``, ``list[bool | str]``."""
    import types
    import typing

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is bool:
        return True
    if origin is typing.Literal:
        return any(isinstance(value, bool) for value in args)
    if origin is typing.Annotated:
        return _takes_a_bool(args[0])
    if origin in (typing.Union, types.UnionType, list, tuple, set, frozenset):
        return any(_takes_a_bool(arg) for arg in args if arg is not type(None))
    return False


def _one_of(what: str, name: str, value: object, allowed: tuple[object, ...]) -> None:
    """A Literal-typed declaration checked when it is made, not silently misread later."""
    if value not in allowed:
        shown = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{what}: {name}={value!r} is not one of {shown}")


_DEFAULT_META = ParamMeta()
#: The settings of ParamMeta that shape an input's place on the command line or disk.
_INPUT_ONLY = ("positional", "flag", "style", "list_style", "skip", "mutable", "writable")


@dataclass(frozen=True, slots=True)
class Wrangler:
    """A regular expression over a tool's output lines, and what a match means.

    ``action="output"`` sets output ``output`` from the named group of that name
    or else group 1; ``"error"`` fails the step even when it exits 0;
    ``"warning"`` records the line as a warning.
    """

    pattern: str
    action: Literal["output", "error", "warning"]
    output: str | None = None
    stream: Literal["stdout", "stderr", "both"] = "both"
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        what = f"wrangler {self.shown}"
        try:
            object.__setattr__(self, "regex", re.compile(self.pattern))
        except re.error as exc:  # its class is called `error`: said as it is, it reads oddly
            raise ValueError(f"{what}: not a valid regular expression ({exc})") from None
        _one_of(what, "action", self.action, ("output", "error", "warning"))
        _one_of(what, "stream", self.stream, ("stdout", "stderr", "both"))
        if self.action == "output" and not self.output:
            raise ValueError(f"{what}: action 'output' needs output=FIELD")

    @property
    def shown(self) -> str:
        """The pattern as the user wrote it in a raw string, for messages.

        A plain repr doubles every backslash (``'([\\\\d.]+)'``), which reads as a
        different regular expression to whoever compares it with their recipe.
        """
        if "'" in self.pattern or self.pattern.endswith("\\") or not self.pattern.isprintable():
            return repr(self.pattern)  # no raw string can hold it as it is
        return f"r'{self.pattern}'"


def _command_words(name: str, command: object) -> tuple[str, ...]:
    """``command`` as argv words; a path counts as one word (the program).

    Anything else is refused here, naming the cab: a number in an argv list,
    or a blank first word, would otherwise fail only when the step runs, as an
    internal error.
    """
    if isinstance(command, str):
        try:
            words: tuple[object, ...] = tuple(shlex.split(command))
        except ValueError as exc:  # an unbalanced quote
            raise ValueError(
                f"cab {name!r}: its command {command!r} cannot be split into words"
                f" ({str(exc).lower()}); balance its quotes, or give a list of strings"
            ) from None
    elif isinstance(command, os.PathLike):
        words = (os.fspath(command),)
    elif isinstance(command, Sequence) and not isinstance(command, bytes):
        words = tuple(os.fspath(w) if isinstance(w, os.PathLike) else w for w in command)
    else:
        words = (command,)
    bad = [w for w in words if not isinstance(w, str)]
    if bad or not words:
        said = f"has {bad[0]!r} ({type(bad[0]).__name__})" if bad else "is empty"
        raise ValueError(
            f"cab {name!r}: its command {said}; give a string such as 'wsclean -j 4', or a"
            " list of strings such as ['wsclean', '-j', '4']"
        )
    if not str(words[0]).strip():  # no process can be started from a blank program name
        raise ValueError(
            f"cab {name!r}: its command's first word (the program) is {words[0]!r}; name the"
            " program first, such as ['wsclean', '-j', '4']"
        )
    return words  # type: ignore[return-value]  # every word was checked to be a str


class Cab:
    """A command-line tool: its command and the schemas of its inputs and outputs.

    ``command`` is a string (split like a shell would, without running one) or
    an argv list. Path outputs that share a name with a path input are
    passthroughs: the tool writes (or rewrites) the path it was given, so the
    value is known before the step runs.
    """

    kind = "cab"

    def __init__(
        self,
        name: str,
        command: str | Sequence[str],
        inputs_model: type[BaseModel] | None = None,
        outputs_model: type[BaseModel] | None = None,
        field_meta: Mapping[str, ParamMeta] | None = None,
        *,
        image: str | None = None,
        resources: Resources | None = None,
        wranglers: Iterable[Wrangler] = (),
        version: str | None = None,
        flag_prefix: str = "--",
        env: Mapping[str, str] | None = None,
        cache: bool | None = None,
        description: str | None = None,
    ) -> None:
        from shinobi.steps.models import step_model

        self.name = name
        self.command = _command_words(name, command)
        owner = f"cab {name!r}"
        self.inputs_model = step_model(inputs_model, owner, name, "inputs")
        self.outputs_model = step_model(outputs_model, owner, name, "outputs")
        #: read-only: see :meth:`__setattr__`
        for key, meta in (field_meta or {}).items():
            if not isinstance(meta, ParamMeta):  # read later as one: a bare AttributeError
                example = (
                    f"ParamMeta(**{meta!r})" if isinstance(meta, Mapping) else "ParamMeta(flag=...)"
                )
                raise TypeError(
                    f"cab {name!r}: field_meta[{key!r}] must be a ParamMeta, not"
                    f" {type(meta).__name__} {meta!r}; write {example}"
                )
        self.field_meta: Mapping[str, ParamMeta] = MappingProxyType(dict(field_meta or {}))
        self.image = image
        self.resources = resources
        self.wranglers = tuple(wranglers)
        for wrangler in self.wranglers:
            if not isinstance(wrangler, Wrangler):
                raise TypeError(
                    f"cab {name!r}: wranglers must be Wrangler(...) objects, not"
                    f" {wrangler!r}; write wranglers=[Wrangler(r'pattern', 'error')]"
                )
        self.version = version
        if isinstance(flag_prefix, str) and flag_prefix != flag_prefix.strip():
            raise ValueError(
                f"cab {name!r}: flag_prefix={flag_prefix!r} holds spaces at its ends, which would"
                " become part of every option's word; give it as the tool spells its options"
                " ('--', '-', or '' for name=value style)"
            )
        self.flag_prefix = flag_prefix
        self.env = dict(env or {})
        self.cache = cache
        self.description = description
        self._check_declarations()
        self.__dict__["_made"] = True

    def __setattr__(self, name: str, value: Any) -> None:
        """A cab is fixed once made: what it declares was checked then, and its
        command-line layout, path fields and output rules are worked out once
        and kept (:meth:`kept`). A change made afterwards would be seen by some
        steps and not others, and never checked, so it is refused."""
        if "_made" in self.__dict__:
            raise AttributeError(
                f"cab {self.name!r}: {name} cannot be changed once the cab is made; make a"
                " new Cab(...) with it instead"
            )
        object.__setattr__(self, name, value)

    def __getstate__(self) -> dict[str, Any]:
        """For copy.deepcopy and pickle: ``field_meta`` as a plain dict (a read-only
        view of one cannot be copied), made read-only again by :meth:`__setstate__`."""
        return {**self.__dict__, "field_meta": dict(self.field_meta)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, field_meta=MappingProxyType(state["field_meta"]))

    def _check_declarations(self) -> None:
        """A field_meta key that names no field, and a wrangler target that is no
        output, are refused: either would be ignored, and a flag or an output
        silently lost (an implicit output the tool wrote would come back None)."""
        from shinobi.errors import did_you_mean

        inputs = set(self.inputs_model.model_fields)
        outputs = set(self.outputs_model.model_fields)
        for key in self.field_meta:
            if key not in inputs and key not in outputs:
                raise ValueError(
                    f"cab {self.name!r}: field_meta names {key!r}, which is neither an input nor"
                    f" an output{did_you_mean(key, inputs | outputs) or self._fields_shown()}"
                )
        for key, meta in self.field_meta.items():
            self._check_side(key, meta, key in inputs, key in outputs)
            for kind, template in (("implicit", meta.implicit), ("harvest", meta.harvest)):
                if template:
                    self._check_template(key, kind, template, inputs)
        if self.env:  # docker would read X=Y=1 as X, another engine refuse it at run time
            from shinobi.backends.process import bad_variable

            for variable, value in self.env.items():
                problem = bad_variable(variable, value)
                if problem:
                    raise ValueError(f"cab {self.name!r}: env: {problem}")
        self._check_command_line_forms()
        for wrangler in self.wranglers:
            if wrangler.output is not None and wrangler.output not in outputs:
                raise ValueError(
                    f"cab {self.name!r}: wrangler {wrangler.shown} sets output"
                    f" {wrangler.output!r}, which outputs_model does not have"
                    f"{did_you_mean(wrangler.output, outputs)}"
                )
        self._check_wrangled_types()
        self._check_output_sources()
        self._check_passthroughs()

    def _check_side(self, key: str, meta: ParamMeta, is_input: bool, is_output: bool) -> None:
        """A setting made for the other side of the cab (``implicit=`` on an input,
        ``flag=`` on an output) would be ignored without a word: the output it
        meant to name would come back None, the flag it meant to set never show.
        So would a flag that is empty or holds a space, and an input both
        rewritten in place and promised never to be written."""
        given = {n: getattr(meta, n) for n in _INPUT_ONLY} if not is_input else {}
        wrong = [n for n, v in given.items() if v != getattr(_DEFAULT_META, n)]
        if not is_output:
            wrong += [n for n in ("implicit", "harvest") if getattr(meta, n)]
        if wrong:
            side = "an output" if not is_input else "an input"
            belongs = "inputs" if not is_input else "outputs"
            raise ValueError(
                f"cab {self.name!r}: field_meta[{key!r}] sets {', '.join(wrong)}, which only"
                f" {belongs} have, but {key!r} is {side} only; it would be ignored"
            )
        if meta.flag is not None and (not meta.flag or meta.flag != meta.flag.strip()):
            raise ValueError(
                f"cab {self.name!r}: field_meta[{key!r}] flag={meta.flag!r} is empty or holds"
                " spaces at its ends; give the option as the tool spells it (flag='-n'), or"
                " positional=True for no flag"
            )
        if meta.mutable and not meta.writable:
            raise ValueError(
                f"cab {self.name!r}: input {key!r} is declared both mutable (rewritten in"
                " place) and writable=False (never written); drop one of the two"
            )

    def _check_output_sources(self) -> None:
        """An output given by two sources (a passthrough, an implicit template, a
        harvest glob, an output wrangler) is refused: the dry run and a compiled
        workflow show the one known before the run, while the run takes the one
        found after it, so they would name different files for one edge."""
        for name in self.outputs_model.model_fields:
            sources = self._output_sources(name)
            if len(sources) > 1:
                raise ValueError(
                    f"cab {self.name!r}: output {name!r} is given both by {sources[0]} and by"
                    f" {sources[1]}, which may name different files; keep one of them (what a"
                    " wrangler matches or a glob collects is known only after the tool ran)"
                )

    def _output_sources(self, name: str) -> list[str]:
        """What gives output ``name`` its value (see :meth:`output_rules`), each as a
        message names it."""
        meta = self.meta(name)
        sources = []
        if self.output_rules()[name] == "passthrough":
            sources.append(f"the path input {name!r} (a passthrough)")
        if meta.implicit:
            sources.append(f"its implicit template {meta.implicit!r}")
        if meta.harvest:
            sources.append(f"its harvest glob {meta.harvest!r}")
        wrangled = (w for w in self.wranglers if w.action == "output" and w.output == name)
        wrangler = next(wrangled, None)
        if wrangler is not None:
            sources.append(f"the wrangler {wrangler.shown}")
        return sources

    def _check_passthroughs(self) -> None:
        """A passthrough whose input and output are declared different kinds or shapes
        of path is refused: the output is the path the input was handed, so it could
        never be valid, and the step would fail only after the tool ran."""
        from shinobi.steps.types import fields_of, passthrough_problem

        inputs = fields_of(self.inputs_model)
        for name, rule in self.output_rules().items():
            if rule != "passthrough":
                continue
            made = fields_of(self.outputs_model)[name]
            problem = passthrough_problem(inputs[name], made, self.meta(name).dtype)
            if problem:
                raise ValueError(
                    f"cab {self.name!r}: the passthrough {name!r} (an input and an output of one"
                    f" name) can never be valid: {problem}; declare both the same type, or give"
                    " the output another name"
                )

    def _check_wrangled_types(self) -> None:
        """An output wrangler into a mapping or a model is refused: a match is text,
        which such a field never takes, so every run whose tool printed a matching
        line would fail, after the tool ran."""
        from shinobi.steps.types import fields_of

        specs = fields_of(self.outputs_model)
        for wrangler in self.wranglers:
            if wrangler.output is not None and specs[wrangler.output].structured:
                raise ValueError(
                    f"cab {self.name!r}: wrangler {wrangler.shown} sets output"
                    f" {wrangler.output!r}, a mapping or a model, which the text it matches can"
                    " never be; type the output str (or int, float...), or a list of it to"
                    " collect every match"
                )

    def _fields_shown(self) -> str:
        """``"; its fields: a, b"``: what a field_meta key may name, when no field is
        close enough to suggest."""
        names = sorted({*self.inputs_model.model_fields, *self.outputs_model.model_fields})
        return f"; its fields: {', '.join(names)}" if names else "; it has no fields"

    def _check_command_line_forms(self) -> None:
        """A mapping or model input the command line would get is refused: its word
        would be Python's repr (``{'k': PosixPath('m1')}``), which no tool reads.
        So is a positional bool, and a list of bools: its word would be ``True``,
        which no tool reads either (a bool is a flag, present or absent)."""
        from shinobi.steps.types import fields_of

        for name, spec in fields_of(self.inputs_model).items():
            meta = self.meta(name)
            if (
                not spec.is_bool
                and (meta.positional or spec.is_list)
                and not meta.skip
                and _takes_a_bool(spec.annotation)
            ):
                where = "positional" if meta.positional else "a list"
                raise ValueError(
                    f"cab {self.name!r}: input {name!r} is {where} and takes a bool (a union"
                    " with bool, or Literal[True, False]), so True would reach the tool as the"
                    " word 'True'; type it str or a Literal of the words the tool reads, or"
                    " a plain bool flag"
                )
            if spec.is_bool and meta.positional and not meta.skip:
                raise ValueError(
                    f"cab {self.name!r}: input {name!r} is a bool marked positional, so True would"
                    " reach the tool as the word 'True'; drop positional=True so that"
                    " True gives its flag (spelt with ParamMeta(flag=...)), or type the field"
                    " str or Literal if the tool really wants a word"
                )
            if spec.is_bool and spec.is_list and not meta.skip:
                raise ValueError(
                    f"cab {self.name!r}: input {name!r} is a list of bools, so each True would"
                    " reach the tool as the word 'True' (a bool is a flag, present or absent);"
                    " type it a list of str or Literal with the words the tool reads, or mark"
                    " it ParamMeta(skip=True) to use it only in templates"
                )
            if meta.positional and (meta.flag is not None or meta.style != "space"):
                given = f"flag={meta.flag!r}" if meta.flag is not None else f"style={meta.style!r}"
                raise ValueError(
                    f"cab {self.name!r}: input {name!r} is positional (a bare word, no option)"
                    f" and sets {given}, which would be dropped; drop positional=True to pass it"
                    " as that option, or drop the option's setting"
                )
            if spec.structured and not meta.skip:
                raise ValueError(
                    f"cab {self.name!r}: input {name!r} is a mapping or a model, which has no"
                    " command-line form (the tool would get Python's repr of it); give each"
                    " value an input of its own, or mark it ParamMeta(skip=True) to use it"
                    " only in templates"
                )

    def _check_template(self, key: str, kind: str, template: str, inputs: set[str]) -> None:
        """A template is filled from the step's inputs: one naming something that is
        no input (a typo, mostly) could never be filled, and would fail every run
        of the cab, at run time, with a message that asks to wire the misspelt name.
        """
        import string

        from shinobi.errors import did_you_mean

        where = f"cab {self.name!r}, {key!r}: the {kind} template {template!r}"
        try:
            fields = string.Formatter().parse(template)
            names = [name for _, name, _, _ in fields if name is not None]
        except ValueError as exc:  # an unmatched brace
            raise ValueError(f"{where} is not a template ({exc}; write {{{{ for a brace)") from None
        for name in names:
            root = template_root(name)
            if not root or root.isdigit():  # {} or {0}: filled by position, and nothing is
                example = f", e.g. {{{min(inputs)}}}" if inputs else ""
                raise ValueError(
                    f"{where} has a positional field {{{name}}}, which no input fills; name"
                    f" the input instead{example} (write {{{{ for a literal brace)"
                )
            if root not in inputs:
                raise ValueError(
                    f"{where} names {root!r}, which is not an input of the cab"
                    f"{did_you_mean(root, inputs)}"
                )

    def meta(self, name: str) -> ParamMeta:
        return self.field_meta.get(name, _DEFAULT_META)

    def kept(self, key: str, make: Callable[[Cab], _Fact]) -> _Fact:
        """``make(self)``, worked out on the first call for ``key`` and kept.

        For a fact of the cab's declaration (its models, ``field_meta``,
        ``flag_prefix``), which is settled once the cab is made, that every step
        running it asks: its command line's layout, the paths it touches. As
        :meth:`output_rules` keeps its own, in the instance's ``__dict__``.
        """
        found: _Fact | None = self.__dict__.get(key)
        if found is None:
            found = self.__dict__[key] = make(self)
        return found

    def output_rules(self) -> dict[str, OutputRule | None]:
        """How each output gets its value, the one rule set :mod:`shinobi.steps.outputs`
        applies: ``passthrough`` (a path output with a path input of the same name,
        see :meth:`is_path_input`), ``implicit`` (a template), ``after`` (a harvest
        glob or an output wrangler, once the tool ran), ``passthrough`` again for
        an output named like a plain ``str`` input that none of those gives (the
        text names the path, as it always did), ``default`` (an optional one), or
        None: nothing fills it. Worked out once per cab."""
        rules: dict[str, OutputRule | None] | None = self.__dict__.get("_output_rules")
        if rules is None:
            from shinobi.steps.types import fields_of

            wrangled = {w.output for w in self.wranglers if w.action == "output"}
            inputs = fields_of(self.inputs_model)
            rules = {}
            for name, spec in fields_of(self.outputs_model).items():
                meta = self.meta(name)
                if spec.path_kind is not None and self.is_path_input(name):
                    rules[name] = "passthrough"
                elif meta.implicit:
                    rules[name] = "implicit"
                elif meta.harvest or name in wrangled:
                    rules[name] = "after"
                elif spec.path_kind is not None and name in inputs:
                    rules[name] = "passthrough"  # a text input names it: nothing else does
                elif not spec.required:
                    rules[name] = "default"
                else:
                    rules[name] = None
            self.__dict__["_output_rules"] = rules
        return rules

    def passthroughs(self) -> frozenset[str]:
        """The outputs that are the path their same-name input was handed (see
        :meth:`output_rules`): the user's, which a stopped step leaves in place."""
        found: frozenset[str] | None = self.__dict__.get("_passthroughs")
        if found is None:
            rules = self.output_rules().items()
            found = frozenset(name for name, rule in rules if rule == "passthrough")
            self.__dict__["_passthroughs"] = found
        return found

    def is_path_input(self, name: str) -> bool:
        """Whether ``name`` is an input that holds a path: one declared a path (a path
        type, or ``str`` with ``ParamMeta(dtype=...)``), or ``Any`` or a union with a
        path, which may be handed one. What makes an output of that name a
        passthrough: a plain ``str`` (or ``int``...) input is text, not a path."""
        from shinobi.steps.types import fields_of

        spec = fields_of(self.inputs_model).get(name)
        if spec is None:
            return False
        maybe_a_path = spec.nested_paths and not spec.structured  # not a mapping or a model
        return spec.path_kind is not None or bool(self.meta(name).dtype) or maybe_a_path

    def unfilled_output(self) -> str | None:
        """The first required output no rule fills (see :meth:`output_rules`), that
        None does not fill either.

        Run as a step of its own the cab would fail every time, after the tool
        ran, with pydantic's word for a missing value; the graph refuses it
        first. An ``@step`` function wrapping the cab may fill it in the result
        it returns, so the cab itself is not refused.
        """
        from shinobi.steps.types import fields_of

        specs = fields_of(self.outputs_model)
        rules = self.output_rules()
        return next((n for n, r in rules.items() if r is None and not specs[n].nullable), None)

    def unfilled_message(self, output: str) -> str:
        """Why ``output`` (see :meth:`unfilled_output`) is never filled, and the ways to fill it."""
        from shinobi.steps.types import fields_of

        passthrough = (
            f"a path input {output!r} of the same name (a passthrough), "
            if fields_of(self.outputs_model)[output].path_kind is not None
            else ""
        )
        return (
            f"nothing fills the required output {output!r} of cab {self.name!r}; give it"
            f" {passthrough}ParamMeta(implicit=...) or ParamMeta(harvest=...), a wrangler with"
            f" output={output!r}, or a default"
        )

    def text_paths(self) -> frozenset[str]:
        """The ``str`` (or ``list[str]``) inputs ``ParamMeta(dtype=...)`` declares paths.

        A path value wired to one (a step's File output) is handed to the model
        as its text, which the field accepts, instead of being refused: to
        ninja the field is a path either way. Worked out once per cab.
        """
        found: frozenset[str] | None = self.__dict__.get("_text_paths")
        if found is None:
            from shinobi.steps.types import fields_of

            specs = fields_of(self.inputs_model).items()
            found = frozenset(n for n, s in specs if s.is_text and self.meta(n).dtype)
            self.__dict__["_text_paths"] = found
        return found

    def comma_lists(self) -> tuple[str, ...]:
        """The inputs joined with commas on the command line (``list_style="comma"``,
        not positional, not skipped): worked out once per cab, as every step's
        inputs are checked against it before the step runs."""
        found: tuple[str, ...] | None = self.__dict__.get("_comma_lists")
        if found is None:
            from shinobi.steps.types import fields_of

            metas = ((n, self.meta(n)) for n in fields_of(self.inputs_model))
            found = tuple(
                n for n, m in metas if m.list_style == "comma" and not m.positional and not m.skip
            )
            self.__dict__["_comma_lists"] = found
        return found

    def identity(self) -> dict[str, Any]:
        """What makes two cabs the same tool, for the step cache."""
        from shinobi.steps.models import model_signature

        return {
            "name": self.name,
            "command": list(self.command),
            "version": self.version,
            "inputs": model_signature(self.inputs_model),
            "outputs": model_signature(self.outputs_model),
            "meta": {k: repr(v) for k, v in sorted(self.field_meta.items())},
            "wranglers": [(w.pattern, w.action, w.output, w.stream) for w in self.wranglers],
            "env": sorted(self.env.items()),
        }

    def __repr__(self) -> str:
        return f"Cab({self.name!r}, command={' '.join(self.command)!r})"
