"""Small helpers over pydantic model classes, shared by cabs, recipes and loaders."""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["empty_model", "model_signature", "step_model"]


def step_model(model: Any, owner: str, name: str, role: str) -> type[Any]:
    """The ``role`` model (inputs, outputs) ``owner`` declared, or an empty one.

    ``BaseModel`` itself reads naturally as "no fields" (and pydantic refuses
    to validate against it), so it is taken as exactly that. Anything that is
    not a model class is refused here, where the recipe is written, rather
    than when a run first validates against it.
    """
    from pydantic import BaseModel

    if model is None or model is BaseModel:
        return empty_model(f"{name}_{role}")
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(
            f"{owner}: the {role} model must be a pydantic BaseModel subclass, got {model!r}"
        )
    return model


@cache
def empty_model(name: str) -> type[Any]:
    """A model with no fields, for a step that takes or makes nothing."""
    from pydantic import create_model

    model: type[Any] = create_model(name)
    return model


def model_signature(model: type[Any]) -> list[tuple[str, str, bool]]:
    """A stable description of a model's fields (name, type, required)."""
    return [
        (name, repr(info.annotation), info.is_required())
        for name, info in model.model_fields.items()
    ]


def __getattr__(name: str) -> Any:
    """An empty model by its name (``r_inputs``), as pickle looks one up: a recipe
    declared without a model could not be pickled (for a process pool), nor its
    copy unpickled in another process, where the model is made anew."""
    if name.endswith(("_inputs", "_outputs")) and not name.startswith("_"):
        return empty_model(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
