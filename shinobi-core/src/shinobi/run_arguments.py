"""``run_recipe``'s keyword arguments, checked before anything is planned.

A script calling the Python API meets these the way a user meets command-line
options, and each misuse surfaced deep in ninja as a raw AttributeError or
TypeError (``config={"execution": ...}``, ``observers=progress``), or passed
silently (``use_cache="no"`` is true, so the cache was used). Each is now one
line naming the argument and what it takes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from shinobi.errors import UsageError

__all__ = ["checked_inputs", "checked_observers", "refuse_bad_arguments"]

#: The hooks a run calls on every observer (see :class:`shinobi.session.RunObserver`).
OBSERVER_HOOKS = ("step_started", "step_finished", "warning")


def refuse_bad_arguments(
    config: Any,
    cwd: Any,
    workdir: Any,
    flags: Mapping[str, Any],
) -> None:
    """Refuse an argument of the wrong kind, naming it and what it takes."""
    from shinobi.config import AppConfig

    if config is not None and not isinstance(config, AppConfig):
        raise TypeError(
            f"run_recipe(config=...) takes an AppConfig, not {type(config).__name__}: build"
            " it with shinobi.config.load_config({'execution.max_workers': 4, ...})"
        )
    for name, value in (("cwd", cwd), ("workdir", workdir)):
        if value is not None and not isinstance(value, str | os.PathLike):
            raise TypeError(
                f"run_recipe({name}=...) takes a path (str or pathlib.Path), not"
                f" {type(value).__name__} {value!r}"
            )
    for name, value in flags.items():
        if value is not None and not isinstance(value, bool):
            raise TypeError(
                f"run_recipe({name}=...) takes True, False or None, not {value!r}"
                " (a string such as 'no' is true)"
            )


def checked_observers(observers: Any) -> list[Any]:
    """The observers as a list; each must have every hook a run calls, or the first
    step failed as "internal error: AttributeError" before its tool ran."""
    if observers is None:
        return []
    if not isinstance(observers, Sequence) or isinstance(observers, str):
        raise TypeError(
            f"run_recipe(observers=...) takes a list of observers, not"
            f" {type(observers).__name__}: put it in a list, observers=[...]"
        )
    for observer in observers:
        missing = [hook for hook in OBSERVER_HOOKS if not callable(getattr(observer, hook, None))]
        if missing:
            raise TypeError(
                f"observer {type(observer).__name__} has no {', '.join(missing)}: an observer"
                f" needs {', '.join(OBSERVER_HOOKS)} (see shinobi.session.RunObserver; a hook"
                " it has no use for may do nothing)"
            )
    return list(observers)


def checked_inputs(recipe: Any, inputs: Any) -> Mapping[str, Any]:
    """The inputs as a mapping: the recipe's own inputs model instance gives its
    fields (it was taken for a mapping, and each (name, value) pair refused as an
    unknown input); anything else that is no mapping is refused."""
    from pydantic import BaseModel

    if inputs is None:
        return {}
    if isinstance(inputs, BaseModel):
        return {name: getattr(inputs, name) for name in type(inputs).model_fields}
    if not isinstance(inputs, Mapping):
        raise UsageError(
            f"recipe {recipe.name!r}: the inputs must be a mapping of input names to values"
            f" (or an instance of its inputs model), not {type(inputs).__name__}"
        )
    return inputs
