"""Small helpers over pydantic model classes, shared by cabs, recipes and loaders."""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["empty_model", "model_signature"]


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
