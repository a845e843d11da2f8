"""References that wire a step's inputs to a recipe input or another step's output."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["InputRef", "OutputRef", "field_names"]


def field_names(names: Iterable[str] | str | None) -> tuple[str, ...]:
    """Field names as a tuple; a single string is one name, not its letters.

    ``scatter="ms"`` is the natural way to scatter over one input; iterating
    the string would scatter over inputs "m" and "s".
    """
    if names is None:
        return ()
    return (names,) if isinstance(names, str) else tuple(names)


@dataclass(frozen=True, slots=True)
class InputRef:
    """A value taken from one of the enclosing recipe's own inputs."""

    field: str

    def __str__(self) -> str:
        return f"inputs.{self.field}"


@dataclass(frozen=True, slots=True)
class OutputRef:
    """A value taken from another step's output: this is a dependency edge."""

    step: str
    field: str

    def __str__(self) -> str:
        return f"{self.step}.{self.field}"
