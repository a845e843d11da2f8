"""What running a step or a recipe produced."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["RecipeResult", "StepResult", "StepStatus", "every_step", "first_failed"]

StepStatus = Literal["ok", "failed", "skipped", "cached", "cancelled"]


@dataclass(slots=True)
class StepResult:
    """One step's outcome: outputs, exit status and the text it printed.

    ``error`` is a one-line account of a failure, worded for the user (the
    signal that killed the tool, an out-of-memory kill, a missing output).
    """

    name: str
    status: StepStatus
    outputs: dict[str, Any] = field(default_factory=dict)
    returncode: int | None = 0
    stdout: str = ""
    stderr: str = ""
    error: str | None = None
    signal: int | None = None
    warnings: list[str] = field(default_factory=list)
    backend: str | None = None
    argv: list[str] | None = None
    started: float | None = None
    finished: float | None = None
    slices: list[StepResult] | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "skipped", "cached")


@dataclass(slots=True)
class RecipeResult:
    """A recipe's outcome; ``steps`` is in declaration order, whatever ran first."""

    name: str
    status: StepStatus
    outputs: dict[str, Any] = field(default_factory=dict)
    steps: list[StepResult] = field(default_factory=list)
    error: str | None = None
    failed_step: str | None = None
    #: What the run warned about (a step larger than the budget, a backend's
    #: notes), also for callers of ``run_recipe`` that pass no observer.
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def returncode(self) -> int:
        return 0 if self.ok else 1

    @property
    def stdout(self) -> str:
        return "".join(s.stdout for s in self.steps)

    @property
    def stderr(self) -> str:
        return "".join(s.stderr for s in self.steps)


def every_step(steps: Iterable[StepResult]) -> Iterator[StepResult]:
    """``steps`` with the slices of scattered ones and the steps of nested recipes."""
    for step in steps:
        yield step
        yield from every_step(step.slices or ())
        inner = step.details.get("steps")
        if isinstance(inner, list):
            yield from every_step(inner)


def first_failed(steps: Iterable[StepResult]) -> StepResult | None:
    """The first of ``steps`` that failed on its own (not one stopped by an interrupt)."""
    return next((step for step in steps if step.status == "failed"), None)
