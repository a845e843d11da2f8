"""What the suite reports: figures (measured or honestly not), and targets over them.

A figure that could not be measured carries the reason instead of a number,
so the table and the results file say "not measured: ..." and never show a
placeholder that could be mistaken for a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from timing import Samples

__all__ = ["Figure", "Report", "Target"]


@dataclass
class Figure:
    """One reported quantity: the median of its samples, in ``unit``.

    ``cpu`` is the same quantity computed from CPU time instead of wall time
    (a duration, a ratio or an overhead alike), when the measurement has one.
    """

    key: str
    label: str
    unit: str
    value: float | None = None
    samples: list[float] = field(default_factory=list)
    note: str = ""
    cpu: float | None = None
    cpu_samples: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, key: str, label: str, unit: str, samples: Samples, scale: float = 1.0) -> Figure:
        """The medians of ``samples`` (seconds), times ``scale`` (1000 for ms)."""
        return cls(
            key,
            label,
            unit,
            samples.median * scale,
            [w * scale for w in samples.wall],
            cpu=samples.median_cpu * scale,
            cpu_samples=[c * scale for c in samples.cpu],
        )

    @property
    def measured(self) -> bool:
        return self.value is not None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"label": self.label, "unit": self.unit, "value": self.value}
        if self.samples:
            data["samples"] = [round(s, 6) for s in self.samples]
        if self.cpu is not None:
            data["cpu"] = self.cpu
            data["cpu_samples"] = [round(s, 6) for s in self.cpu_samples]
        if self.note:
            data["note"] = self.note
        return data


@dataclass(frozen=True)
class Target:
    """``figure <= limit``: every target of the suite is an upper bound."""

    figure: str
    limit: float
    text: str

    def status(self, figures: dict[str, Figure]) -> str:
        found = figures.get(self.figure)
        if found is None or found.value is None:
            return "not measured"
        return "pass" if found.value <= self.limit else "miss"


@dataclass
class Report:
    """Every figure of one suite run, in the order they were measured."""

    figures: dict[str, Figure] = field(default_factory=dict)

    def add(self, figure: Figure) -> Figure:
        self.figures[figure.key] = figure
        return figure

    def missing(self, key: str, label: str, unit: str, reason: str) -> Figure:
        """Record that ``key`` was not measured, and why."""
        return self.add(Figure(key, label, unit, note=f"not measured: {reason}"))

    def value(self, key: str) -> float | None:
        found = self.figures.get(key)
        return None if found is None else found.value
