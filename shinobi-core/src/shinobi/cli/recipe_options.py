"""Recipe inputs as command-line options, for every command that takes a target.

A command built on :class:`RecipeCommand` takes ``FILE.py:NAME`` as its first
argument; the recipe is loaded while the arguments are parsed and each field
of its inputs model becomes a typed option (``--target /tmp/x``; a list field
is given by repeating the option). ``ninja run FILE.py:NAME --help`` therefore
documents the recipe's own inputs, from the fields' descriptions.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import click

from shinobi.cli import collector

__all__ = ["TARGET_KEY", "RecipeCommand", "recipe_values"]

_RECIPE_KEY = "shinobi_recipe"
#: Where the loaded FILE.py:NAME is kept, for messages that point at its --help.
TARGET_KEY = "shinobi_target"
_INPUTS_KEY = "shinobi_inputs"


class _Json(click.ParamType):
    """A value with structure (a mapping, a model): given on the command line as JSON."""

    name = "json"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        import json

        try:
            return json.loads(value)
        except ValueError as exc:
            self.fail(f"{value!r} is not JSON ({exc}); give it as JSON, e.g. '{{\"a\": 1}}'")


def _structured(core: Any) -> bool:
    return core is dict or typing.get_origin(core) is dict or hasattr(core, "model_fields")


def _click_type(annotation: Any) -> tuple[Any, bool, bool]:
    """(click type, is_list, is_bool) for a pydantic field annotation."""
    from shinobi.steps.types import _unwrap

    core, _, is_list = _unwrap(annotation, [])
    if _structured(core):
        return _Json(), is_list, False
    if typing.get_origin(core) is typing.Literal:
        return click.Choice([str(a) for a in typing.get_args(core)]), is_list, False
    if core is bool:
        return click.BOOL, is_list, not is_list
    if core is int:
        return click.INT, is_list, False
    if core is float:
        return click.FLOAT, is_list, False
    if isinstance(core, type) and issubclass(core, Path):
        return click.Path(path_type=str), is_list, False
    return click.STRING, is_list, False


def _first_target(args: list[str], command: click.Command) -> str | None:
    takes_value = {
        opt
        for param in command.params
        if isinstance(param, click.Option) and not param.is_flag
        for opt in param.opts
    }
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
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


class RecipeCommand(click.Command):
    """A command whose options include the target recipe's inputs."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # The command object outlives one invocation (tests, embedding): drop the
        # options the previous target added before adding this target's.
        self.params = [p for p in self.params if not (p.name or "").startswith(_INPUTS_KEY)]
        target = _first_target(args, self)
        if target is not None and ":" in target:
            collector.freeze_libraries(_load_libraries)  # before the first code of the user's
            from shinobi.loaders import load_target
            from shinobi.runner import as_recipe

            # a single cab or pystep as the recipe that runs it: its options are
            # that recipe's inputs (a list for each field the step scatters over)
            recipe = as_recipe(load_target(target))
            ctx.meta[_RECIPE_KEY] = recipe
            ctx.meta[TARGET_KEY] = target
            self.params = [*self.params, *self._input_options(recipe, ctx)]
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            exc.ctx = exc.ctx or ctx  # click's parser leaves some of its errors without one
            raise

    def invoke(self, ctx: click.Context) -> Any:
        from shinobi.errors import InputError, UsageError

        try:
            return super().invoke(ctx)
        except InputError as exc:  # said with the option that sets the input
            option = self._option_of(exc.field.split(".", 1)[0])
            shown = f" ({option})" if option else ""
            raise UsageError(
                f"recipe {exc.recipe!r}, input {exc.field!r}{shown}: {exc.problem}"
            ) from None

    def _option_of(self, field: str) -> str | None:
        for param in self.params:
            if param.name == f"{_INPUTS_KEY}:{field}" and param.opts:
                return str(param.opts[0])
        return None

    def _input_options(self, recipe: Any, ctx: click.Context) -> list[click.Option]:
        # --help is not among the params yet (click adds it when it parses)
        own = {opt for p in self.params for opt in getattr(p, "opts", [])}
        own.update(ctx.help_option_names)
        options: list[click.Option] = []
        for name, info in recipe.inputs_model.model_fields.items():
            ctype, is_list, is_bool = _click_type(info.annotation)
            dashed = "--" + name.replace("_", "-")
            names = [dashed] if dashed not in own else ["--input-" + name.replace("_", "-")]
            if "--" + name not in names and "--" + name not in own:
                names.append("--" + name)
            required = info.is_required()
            default = None if required else _shown_default(info)
            help_text = info.description or ""
            if not required and default not in (None, [], ()):
                help_text = f"{help_text} [default: {default}]".strip()
            if required:
                help_text = f"{help_text} [required]".strip()
            if is_bool:
                flags = [f"{n}/--no-{n[2:]}" for n in names[:1]]
                option = click.Option(flags, default=None, help=help_text)
            else:
                option = click.Option(
                    names,
                    type=ctype,
                    multiple=is_list,
                    default=None,
                    help=help_text,
                    metavar=name.upper(),
                )
            option.name = f"{_INPUTS_KEY}:{name}"
            options.append(option)
        return options


def _shown_default(info: Any) -> Any:
    """A field's default as ``--help`` shows it: a factory's product, an enum's value."""
    import enum

    default = info.get_default(call_default_factory=True)
    if isinstance(default, enum.Enum):
        return default.value
    return default


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
    for key in [k for k in params if k.startswith(f"{_INPUTS_KEY}:")]:
        value = params.pop(key)
        if value is None or value == ():
            continue
        values[key.split(":", 1)[1]] = list(value) if isinstance(value, tuple) else value
    return recipe, values
