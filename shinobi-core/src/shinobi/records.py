"""What a run leaves behind besides its outputs: the step cache, the run manifest.

Both are attached to a session here so the runner stays a short list of steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shinobi.session import Session
    from shinobi.steps.recipe import Recipe
    from shinobi.steps.result import RecipeResult

__all__ = ["Records", "attach_records"]


class Records:
    """The records of one run; ``close`` finalises them with the run's result."""

    def __init__(self) -> None:
        self.closers: list[Any] = []

    def close(self, result: RecipeResult) -> None:
        for closer in self.closers:
            closer(result)


def attach_records(
    session: Session, recipe: Recipe, inputs: dict[str, Any], provenance: bool | None
) -> Records:
    records = Records()
    return records
