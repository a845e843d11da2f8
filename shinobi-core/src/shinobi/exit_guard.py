"""Code of the user's that calls ``os._exit`` in ninja's process fails its step.

An in-process pystep or an orchestration function runs inside ninja. Called
there, ``os._exit(0)`` would end ninja at once with status 0: the steps after
it never run and nothing says so. While such code runs, ``os._exit`` in
ninja's own process raises :class:`ExitRefused` (a ``SystemExit``, so the step
fails as for ``sys.exit``); in a process forked from it (``multiprocessing``,
``os.fork``) it exits as it always does. What no Python can intercept (C code
calling ``exit()``, a signal) still ends ninja; ``ninja runs`` then says the
run ended abruptly.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")

__all__ = [
    "ExitInValidator",
    "ExitRefused",
    "describe_exit",
    "exits_refused",
    "validated",
]

_real_exit = os._exit
_lock = threading.Lock()
_holders = 0
_owner = 0


class ExitRefused(SystemExit):
    """``os._exit(code)`` called by a step's Python in ninja's own process."""


class ExitInValidator(Exception):
    """``sys.exit()`` called by a validator of a step's or recipe's model while ninja
    validated its values. Let through, it ended ninja with that status (0 for
    ``sys.exit()``), saying nothing and leaving the steps running meanwhile;
    as an ordinary exception it refuses the value, or fails the step, as any
    other exception a validator raises does."""

    #: What :func:`shinobi.errors.exception_line` calls it: what the code raised.
    shown_as = "SystemExit"


def validated(validate: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``validate(*args, **kwargs)``, a model's validation, with a ``sys.exit()`` its
    validators call raised as :class:`ExitInValidator`: every place ninja runs a
    recipe's validators then handles it as it handles any exception of theirs."""
    try:
        return validate(*args, **kwargs)
    except SystemExit as exc:
        said = f"a validator {describe_exit(exc)}; raise ValueError to refuse a value"
        raise ExitInValidator(said) from None


def _refuse(status: int) -> NoReturn:
    if os.getpid() != _owner:  # a child forked by the step's code: exit as asked
        _real_exit(status)
    raise ExitRefused(status)


@contextlib.contextmanager
def exits_refused() -> Iterator[None]:
    """While the block runs, ``os._exit`` in this process raises :class:`ExitRefused`."""
    global _holders, _owner
    with _lock:
        if _holders == 0:
            _owner = os.getpid()
            os._exit = _refuse
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                os._exit = _real_exit


def describe_exit(exc: SystemExit) -> str:
    """How a step's Python asked to end, for its one-line error."""
    if isinstance(exc, ExitRefused):
        return (
            f"called os._exit({exc.code!r}), which would have ended ninja and the rest of the"
            " run; return (or raise) to end the step"
        )
    return f"called sys.exit({exc.code!r})"
