"""Exceptions that carry a message meant for the person at the terminal.

Every error a user can cause derives from :class:`ShinobiError`; the CLI prints
its message as one line and exits with ``exit_code`` instead of a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ENVIRONMENT_EXIT",
    "BackendNotFound",
    "CallRefused",
    "ConfigError",
    "InputError",
    "LoadError",
    "MachineRefused",
    "PluginFault",
    "RecipeGraphError",
    "ShinobiError",
    "StepFailed",
    "UsageError",
    "did_you_mean",
    "exception_line",
    "field_subject",
]


#: The exit status when the machine, or a service a command needs (a scheduler's
#: controller), refused or did not answer (sysexits' EX_IOERR).
ENVIRONMENT_EXIT = 74


def exception_line(exc: BaseException) -> str:
    """``Type: first line of the message``, for an error that must stay on one line;
    whether the message had more lines is ``"\n" in str(exc)``.

    A pydantic ValidationError's first line only counts its errors ("1 validation
    error for S"); what was refused is on the lines after, so it gets its first
    error instead: ``ValidationError: S: n: Input should be a valid integer``.
    """
    text = _validation_summary(exc) or str(exc).strip()
    name = getattr(exc, "shown_as", None) or type(exc).__name__
    return f"{name}: {text.splitlines()[0] if text else ''}"


def _validation_summary(exc: BaseException) -> str | None:
    core = sys.modules.get("pydantic_core")  # not loaded: exc cannot be one of its errors
    if core is None or not isinstance(exc, core.ValidationError):
        return None
    errors = exc.errors()
    if not errors:
        return None
    from shinobi.steps.types import error_field  # pydantic is loaded: exc is its error

    first = errors[0]
    field = error_field(first)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{exc.title}: {field + ': ' if field else ''}{first.get('msg')}{more}"


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the candidate closest to ``name``, or ``""``.

    The tail every "no such name" message ends with; difflib is imported only
    when a message is being made, never on the way to a successful run.
    """
    import difflib

    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


class ShinobiError(Exception):
    """An error whose message names the problem and the fix."""

    exit_code = 2

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its message and attributes, not by its constructor's arguments.

        A process pool (concurrent.futures, multiprocessing, dask) hands an
        exception back to its caller pickled; Python rebuilds one by calling its
        class with ``args`` (the message), which the subclasses that take other
        arguments (:class:`InputError`, ``Interrupted``) refused, and the pool
        broke instead of raising the one-line error.
        """
        return (_rebuilt, (type(self), self.args, self.__dict__))


def _rebuilt(cls: type[ShinobiError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    """A :class:`ShinobiError` of ``cls`` as :meth:`ShinobiError.__reduce__` kept it."""
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class UsageError(ShinobiError):
    """Bad command-line input."""


class MachineRefused(ShinobiError):
    """This machine refused what a command was asked (a full or read-only disk,
    another user's files): no fault of the input, so not exit 2."""

    exit_code = ENVIRONMENT_EXIT


class InputError(UsageError):
    """A recipe input its inputs model refused.

    The message names the field; the command line adds the option that sets
    it (which is not always ``--FIELD``: an input named like one of the
    command's own options is ``--input-FIELD``).
    """

    def __init__(self, recipe: str, field: str, problem: str) -> None:
        #: "" when the model as a whole refused the inputs (a validator of its own)
        self.field = field
        super().__init__(f"recipe {recipe!r}, {self.subject}: {problem}")
        self.recipe = recipe
        self.problem = problem

    @property
    def subject(self) -> str:
        """``input 'n'``, or ``its inputs`` when no one field is to blame."""
        return field_subject(self.field, "input")


def field_subject(field: str, side: str) -> str:
    """``input 'n'``, or ``its inputs`` for "" (the model as a whole, what a model
    validator of its own refused): how a message names what ``side`` ("input",
    "output") it is about."""
    return f"{side} {field!r}" if field else f"its {side}s"


class LoadError(ShinobiError):
    """A recipe target could not be loaded (missing file, attribute, syntax error)."""


class ConfigError(ShinobiError):
    """A configuration file or SHINOBI_* variable is invalid."""


class RecipeGraphError(ShinobiError):
    """A recipe's wiring is invalid: raised by build_graph before anything runs."""


class BackendNotFound(ShinobiError):
    """A backend name is unknown or its distribution is not installed."""


class PluginFault(ShinobiError):
    """A plugin's own code broke its contract (raised, or returned no result): one
    line naming the plugin and its distribution as the one to report it to, not
    ninja's internal error."""

    exit_code = 1


class CallRefused(ShinobiError, ValueError):
    """What a step's own code asked of ninja, refused (``ctx.run()`` with an input
    the cab has not, or a value its model refuses): one line naming the fix, no
    traceback through ninja's frames. A ValueError too, for code that catches one."""


class StepFailed(ShinobiError):
    """A step exited non-zero, was killed, or raised."""

    exit_code = 1
