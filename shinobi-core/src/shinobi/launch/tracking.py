"""Asking an engine about a detached launch: the interface every launching plugin answers.

A :class:`LaunchTracker` rebuilds a launch's state from its handle alone
(``ninja status``, ``runs``, ``logs``, ``cancel``, ``clean`` all go through
it). The offload targets (:class:`shinobi.offload.base.OffloadTarget`) and
the remote launchers implement it; :func:`tracker_for` finds the one a
handle names through the plugin registry, so core never imports a plugin.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Literal

from shinobi.launch.handle import LaunchHandle

__all__ = [
    "ACTIVE",
    "FINAL",
    "LaunchStatus",
    "LaunchTracker",
    "LogSource",
    "StepPhase",
    "StepState",
    "TaskEnd",
    "tracker_for",
]

StepPhase = Literal["pending", "running", "completed", "failed", "cancelled", "skipped", "unknown"]

#: Phases after which nothing more happens to a step.
FINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled", "skipped"})
#: Phases of a step that may still change ("unknown": not yet visible to the engine).
ACTIVE: frozenset[str] = frozenset({"pending", "running", "unknown"})


@dataclass(frozen=True, slots=True)
class TaskEnd:
    """A task of a job array (a slice of a scattered step) that started and then
    failed or was cancelled: which one, and when, for ``ninja status`` to name
    what it may have left half-written and a script to know what to run again."""

    task: int
    phase: StepPhase
    started: str | None = None
    finished: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class StepState:
    """One step of a launch as the engine sees it now.

    ``detail`` is the engine's account worded for the user ("exited with code
    3", "out of memory", "never ran: a step it depends on failed");
    ``engine_state`` is the raw word (``OUT_OF_MEMORY``) for scripts and
    ``--json``. ``tasks`` counts a job array's tasks by phase, and
    ``unfinished_tasks`` are those of its tasks that started and then failed
    or were cancelled, in task order.
    """

    step: str
    phase: StepPhase
    detail: str | None = None
    engine_state: str | None = None
    job_id: str | None = None
    exit_code: str | None = None
    started: str | None = None
    finished: str | None = None
    tasks: dict[str, int] | None = None
    unfinished_tasks: tuple[TaskEnd, ...] = ()

    @property
    def final(self) -> bool:
        return self.phase in FINAL

    @property
    def went_wrong(self) -> bool:
        """Failed or cancelled; or, a job array still running, a task of it did
        (the step cannot complete any more: that is news now, not at its end)."""
        if self.phase in ("failed", "cancelled"):
            return True
        return bool(self.tasks and (self.tasks.get("failed") or self.tasks.get("cancelled")))

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "phase": self.phase,
            "detail": self.detail,
            "engine_state": self.engine_state,
            "job_id": self.job_id,
            "exit_code": self.exit_code,
            "started": self.started,
            "finished": self.finished,
            "tasks": self.tasks,
            "unfinished_tasks": [t.to_json() for t in self.unfinished_tasks]
            if self.tasks is not None
            else None,
        }


@dataclass(slots=True)
class LaunchStatus:
    """A launch's state, rebuilt from the engine; ``error`` when it could not be asked."""

    handle: LaunchHandle
    steps: list[StepState] = field(default_factory=list)
    error: str | None = None
    #: What a finished launch's user must know though nothing failed (a loop
    #: that never converged); the summary line carries them.
    notes: list[str] = field(default_factory=list)
    #: The ``error`` is not the engine's being away: the handle is damaged, or the
    #: plugin that answers for it is not installed (a note, which stays).
    damaged: bool = False
    #: How the launch was seen to end (its ``ended`` file). It is the state: a job
    #: that ended does not change, and the engine's answer now may no longer say
    #: how it ended (accounting purged, the cluster out of reach, its plugin not
    #: installed here), where "unknown" or "running" would be wrong.
    noted: str | None = None

    @property
    def state(self) -> str:
        """``running``, ``completed``, ``failed``, ``cancelled`` or ``unknown``."""
        return self.noted or self.engine_state

    @property
    def engine_state(self) -> str:
        """The state the engine's answer about the steps gives, whatever was noted."""
        if not self.steps:
            return "unknown"
        phases = {s.phase for s in self.steps}
        if phases & ACTIVE:
            return "unknown" if phases == {"unknown"} and self.error else "running"
        if "failed" in phases:
            return "failed"
        if "cancelled" in phases:
            return "cancelled"
        return "completed"

    @property
    def final(self) -> bool:
        return self.state in ("completed", "failed", "cancelled")

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for step in self.steps:
            found[step.phase] = found.get(step.phase, 0) + 1
        return found

    def failures(self) -> list[StepState]:
        """Failed steps, and job arrays still running with a failed task."""
        return [s for s in self.steps if s.phase == "failed" or (s.tasks or {}).get("failed")]

    def summary(self) -> str:
        """One line: the overall state, the counts, and the first failure with its cause."""
        counts = self.counts()
        order = ("completed", "skipped", "running", "pending", "unknown", "failed", "cancelled")
        parts = [f"{counts[p]} {p}" for p in order if counts.get(p)]
        state = self.state
        if self.noted and self.steps and self.engine_state != self.noted:
            state += " (as recorded when it ended; the engine's answer now says less)"
        line = f"{state}: {', '.join(parts) or 'no steps'}"
        failed = self.failures()
        if failed:
            first = failed[0]
            how = "failed" if first.phase == "failed" else "has a failed task"
            line += f"; step {first.step!r} {how}: {first.detail or first.engine_state}"
            if len(failed) > 1:
                line += f" (and {len(failed) - 1} more)"
        for note in self.notes:
            line += f"; {note}"
        if self.error:
            line += f"; {self.error}"
        return line

    def to_json(self) -> dict[str, Any]:
        handle = self.handle
        return {
            "name": handle.name,
            "recipe": handle.recipe,
            "run_id": handle.run_id,
            "engine": handle.engine,
            "handle": str(handle.path) if handle.path else None,
            "created": handle.created,
            "state": self.state,
            "summary": self.summary(),
            "error": self.error,
            "steps": [s.to_json() for s in self.steps],
        }


@dataclass(frozen=True, slots=True)
class LogSource:
    """One log stream of a launch: a step's stdout or stderr (one task's, for arrays)."""

    step: str
    stream: Literal["stdout", "stderr"]
    location: str
    label: str = ""

    @property
    def title(self) -> str:
        """``make stdout``: as a local run's logs are headed, so that what reads one
        reads the other (a recipe moved to a cluster kept its followers' greps)."""
        return f"{self.label or self.step} {self.stream}"


class LaunchTracker(ABC):
    """What a plugin that launches detached work answers about it.

    ``settings`` is the plugin's configuration table (``[backend.NAME]``),
    the same one its step backend reads.
    """

    name: ClassVar[str]
    #: The keys it reads from ``[backend.NAME]`` (see ``Backend.settings_keys``).
    settings_keys: ClassVar[frozenset[str] | None] = None

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        self.settings: Mapping[str, Any] = dict(settings or {})

    @abstractmethod
    def status(self, handle: LaunchHandle) -> LaunchStatus:
        """The launch's state now, asked of the engine in a constant number of calls."""

    def status_many(self, handles: Sequence[LaunchHandle]) -> list[LaunchStatus]:
        """Several launches at once; engines that can should ask once for all of them."""
        return [self.status(h) for h in handles]

    @abstractmethod
    def cancel(self, handle: LaunchHandle) -> list[str]:
        """Stop everything of the launch that is still queued or running; say what was done."""

    @abstractmethod
    def log_sources(self, handle: LaunchHandle, step: str | None = None) -> list[LogSource]:
        """The log streams of the launch, or of one step; raise UsageError for an unknown step."""

    def read_log(self, handle: LaunchHandle, source: LogSource, offset: int = 0) -> tuple[str, int]:
        """Text of ``source`` from byte ``offset``, and the offset to continue from.

        The default reads a file on this host (shared storage); a remote
        launcher overrides it.
        """
        try:
            with open(source.location, "rb") as fh:
                fh.seek(offset)
                data = fh.read()
        except FileNotFoundError:
            return "", offset
        return data.decode("utf-8", errors="replace"), offset + len(data)

    def poll_interval(self) -> float:
        """Seconds between two rounds of ``--watch`` / ``--follow``."""
        return float(self.settings.get("status_interval", 5.0))


def tracker_for(handle: LaunchHandle) -> LaunchTracker:
    """The plugin that answers for ``handle``, configured as it was where it was launched.

    The project file of the launch's cwd (``shinobi.toml``) is read when that
    directory is still there, so ``[backend.slurm]`` settings such as a
    ``command_prefix`` apply to ``ninja status`` run from anywhere.
    """
    from pathlib import Path

    from shinobi.backends.registry import load_plugin, make_plugin
    from shinobi.config import load_config

    cls = load_plugin(handle.group, handle.engine)
    if not (isinstance(cls, type) and issubclass(cls, LaunchTracker)):
        from shinobi.errors import BackendNotFound

        raise BackendNotFound(
            f"the plugin {handle.engine!r} ({handle.group}) cannot report on launches;"
            " upgrade the distribution that provides it"
        )
    cwd = Path(handle.cwd) if handle.cwd and os.path.isdir(handle.cwd) else None
    config = load_config(cwd=cwd)
    # made as every plugin is: a constructor that raises is the plugin's fault, named
    settings = config.backend_settings(handle.engine)
    tracker: LaunchTracker = make_plugin(handle.group, handle.engine, LaunchTracker, settings)
    config.check_backend_table(handle.engine, tracker.settings_keys)
    return tracker
