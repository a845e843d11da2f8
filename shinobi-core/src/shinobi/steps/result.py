"""What running a step or a recipe produced."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "RESULT_TAIL",
    "RecipeResult",
    "StepResult",
    "StepStatus",
    "every_step",
    "failing_part",
    "first_failed",
    "joined_tail",
    "kept_tail",
    "run_secrets",
    "shown_outputs",
]

StepStatus = Literal["ok", "failed", "skipped", "cached", "cancelled"]

#: Characters of each stream a finished step's result keeps. Its logs have
#: everything; a run keeps every result until it ends, and 10,000 slices of a
#: tool that prints a megabyte each would otherwise hold gigabytes in ninja.
RESULT_TAIL = 256 * 1024


def kept_tail(text: str, before: int = 0) -> str:
    """The end of ``text`` a result keeps, saying so when there was more before it
    (``before``: characters already left out ahead of ``text``)."""
    if len(text) <= RESULT_TAIL and not before:
        return text
    cut = 0
    if len(text) > RESULT_TAIL:  # from a line's start, when the tail holds one
        cut = text.find("\n", len(text) - RESULT_TAIL) + 1 or len(text) - RESULT_TAIL
    return f"[{before + cut} earlier characters are in the step's logs]\n{text[cut:]}"


def joined_tail(texts: Sequence[str]) -> str:
    """:func:`kept_tail` of ``texts`` joined, without joining them all: a scatter of
    10,000 slices would otherwise build its whole output once more to cut it."""
    kept: list[str] = []
    size = 0
    for text in reversed(texts):
        if size > RESULT_TAIL:
            break
        kept.append(text)
        size += len(text)
    before = sum(len(text) for text in texts[: len(texts) - len(kept)])
    return kept_tail("".join(reversed(kept)), before)


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
    #: The secret inputs (``SecretStr``) the step was given, as those objects:
    #: what ninja masks in its outputs where it shows or keeps them (see
    #: :func:`shown_outputs`); ``outputs`` itself keeps the real values.
    secrets: tuple[Any, ...] = field(default=(), repr=False, compare=False)

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
    #: The run's id: its folder under ``.shinobi/runs``, for ``ninja logs``/``report``.
    run_id: str | None = None
    #: Why the records of a run whose steps all went well could not all be written
    #: (its manifest, on a full disk): the result stands, and is warned of (``ninja
    #: run`` exits 0, as when its standard output is refused). None when they were.
    records_lost: str | None = None

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


def failing_part(parts: Iterable[StepResult]) -> StepResult | None:
    """The slice (or nested step) that speaks for a failed scattered step or
    recipe: the first that failed on its own, else the first an interrupt
    stopped. Its error is the step's, so its stderr is the excerpt to show."""
    parts = list(parts)
    return first_failed(parts) or next((part for part in parts if not part.ok), None)


def run_secrets(steps: Iterable[StepResult]) -> list[str]:
    """The text of every secret input of ``steps`` (their slices and nested
    steps too), longest first; for a run with none, one look at each step."""
    found = [secret for step in every_step(steps) for secret in step.secrets]
    if not found:
        return []
    from shinobi.steps.argv import secret_texts

    return secret_texts(found)


def shown_outputs(outputs: dict[str, Any], steps: Iterable[StepResult]) -> dict[str, Any]:
    """``outputs`` as ninja shows and keeps them (the run's last lines, ``--json``,
    the manifest): a secret input of ``steps`` that a tool echoed into one is
    masked. The result's own outputs keep the value, which the next step needs."""
    secrets = run_secrets(steps)
    if not secrets:
        return outputs
    from shinobi.steps.argv import masked

    shown: dict[str, Any] = masked(outputs, secrets)
    return shown
