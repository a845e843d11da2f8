"""References that wire a step's inputs to a recipe input or another step's output."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["InputRef", "OutputRef"]


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
