"""References that wire a step's inputs to a recipe input or another step's output."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["InputRef", "OutputRef", "field_names"]


def field_names(names: Iterable[str] | str | None, what: str = "scatter") -> tuple[str, ...]:
    """Field names as a tuple; a single string is one name, not its letters.

    ``scatter="ms"`` is the natural way to scatter over one input; iterating
    the string would scatter over inputs "m" and "s". Anything but names
    (``scatter=[recipe.inputs.ms]``, a number) is refused here, naming
    ``what``, rather than failing later inside ninja.
    """
    if names is None:
        return ()
    if isinstance(names, str):
        return (names,)
    found = tuple(names) if isinstance(names, Iterable) else (names,)
    for name in found:
        if not isinstance(name, str):
            shown = f"the reference {name}" if isinstance(name, InputRef) else repr(name)
            raise TypeError(
                f"{what} takes the names of the step's own inputs as text (scatter=['ms']),"
                f" not {shown}"
            )
    return found


@dataclass(frozen=True, slots=True)
class InputRef:
    """A value taken from one of the enclosing recipe's own inputs."""

    field: str
    #: The recipe whose ``inputs`` proxy made it (None: made by hand), so a
    #: proxy of another recipe wired here is refused, not read as this one's.
    recipe: str | None = dataclasses.field(default=None, compare=False, repr=False)
    #: That recipe object's ``id``: two recipes of one name (a factory's) told apart.
    owner: int | None = dataclasses.field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"inputs.{self.field}"


@dataclass(frozen=True, slots=True)
class OutputRef:
    """A value taken from another step's output: this is a dependency edge."""

    step: str
    field: str
    #: As :attr:`InputRef.recipe` and :attr:`InputRef.owner`, for the ``outputs`` proxy.
    recipe: str | None = dataclasses.field(default=None, compare=False, repr=False)
    owner: int | None = dataclasses.field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.step}.{self.field}"
