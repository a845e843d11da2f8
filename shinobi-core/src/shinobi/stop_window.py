"""Steps that ended ``ok`` just before a stop: recorded as stopped, not trusted.

One signal often reaches a tool and ninja together (``systemctl stop``,
``scancel``, ``kill -TERM`` of the process tree). A tool that traps it and
exits 0 with half its product written may end before ninja's handler has
noted the stop, and nothing at the moment of its exit tells that exit from a
genuine end: it was recorded ``ok``, its part kept its name, and the step
cache replayed it. So when the stop is known, at the end of the stopped run,
a tool's run that ended ``ok`` within :data:`STOP_WINDOW` before it is treated
like one that ended after it: its cache entry is removed, its products are
set aside as ``NAME.interrupted`` (see :mod:`shinobi.interrupted_outputs`), and
it is recorded ``cancelled``, with the steps that hold it (a scattered step, a
nested recipe, an orchestration function). In doubt ninja runs a step again
rather than trust it: one that genuinely finished just before a Ctrl-C runs
again next time. Not a job of a backend that runs elsewhere (a cluster's): the
signal does not reach it, and one the stop cancels is recorded cancelled by
its scheduler, so its ``ok`` stands (taken back, it ran again over its kept
product, and an appending tool's product was doubled).
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shinobi.backends.base import Invocation
    from shinobi.session import Session
    from shinobi.steps.result import RecipeResult, StepResult
    from shinobi.untouched_outputs import Found

__all__ = ["STOP_WINDOW", "RecentRuns", "recall_recent", "undo_run"]

#: Seconds before a stop within which a tool's ``ok`` is not trusted. The
#: signal reaches the tool and ninja within microseconds, but ninja notes it
#: only when its main thread gets to run the Python handler (after a step's
#: bookkeeping, a pause of the interpreter, a loaded host); a second covers
#: that with room to spare, and costs at most a second's worth of finished
#: steps a run again.
STOP_WINDOW = 1.0


@dataclass(slots=True)
class _Ended:
    """A tool's run that ended ``ok``, and how to take it back.

    Not frozen: nothing assigns to one, and a frozen class costs every ``ninja``
    command about 0.5 ms more to create (two more generated methods) and each
    step that ends ``ok`` a slower ``__init__``.
    """

    name: str
    finished: float
    #: sets its products aside and forgets its cache entry; returns the warnings
    undo: Callable[[], list[str]]


class RecentRuns:
    """The tools' runs of a session that ended ``ok`` lately, for :func:`recall_recent`.

    Only those of the last :data:`STOP_WINDOW` seconds are kept (counted back
    from the stop, once there is one), so a long run holds a handful, not
    every step's outputs as they were before it ran.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: collections.deque[_Ended] = collections.deque()

    def note(
        self, name: str, finished: float, undo: Callable[[], list[str]], stop: float | None
    ) -> None:
        """Keep a run that ended ``ok`` at ``finished``; ``stop``: when the run was
        asked to stop, if it was (nothing it may still have to recall is dropped)."""
        now = time.time()  # read before ``stop``: a stop after this is later than now
        cutoff = min(now, stop if stop is not None else now) - STOP_WINDOW
        with self._lock:
            self._kept.append(_Ended(name, finished, undo))
            while self._kept and self._kept[0].finished < cutoff:
                self._kept.popleft()

    def take(self, moment: float) -> list[_Ended]:
        """The runs kept that ended at ``moment`` or after it, no longer kept."""
        with self._lock:
            taken = [ended for ended in self._kept if ended.finished >= moment]
            self._kept = collections.deque(e for e in self._kept if e.finished < moment)
        return taken


def undo_run(
    session: Session,
    result: StepResult,
    invocation: Invocation,
    passthroughs: Collection[str],
    before: dict[str, Found],
    started: float,
) -> list[str]:
    """Take back a tool's run that ended ``ok`` (on a backend that runs here):
    forget the cache entry it stored, and set its products aside as a stopped
    step's are. Returns the warnings, the step's like a stopped one's."""
    from shinobi.interrupted_outputs import set_aside

    key = result.details.pop("cache_key", None)
    if isinstance(key, str) and session.cache is not None:
        session.cache.forget(key)
    own = session.product_paths(result.outputs)
    others = session.products - own  # its own, noted as done, are what it wrote
    asides = set_aside(invocation.paths, passthroughs, before, started, others)
    return [aside.warning() for aside in asides]


def recall_recent(session: Session, result: RecipeResult) -> bool:
    """At the end of a run stopped by a signal: take back every tool's run that
    ended ``ok`` within :data:`STOP_WINDOW` before the stop, and record the steps
    that hold one as ``cancelled`` (their records and the progress say so again).
    Whether any was; each is taken back once, however often this is called."""
    asked = session.control.stop_requested_at
    if asked is None:
        return False
    warnings: dict[str, list[str]] = {}
    for ended in session.recent.take(asked - STOP_WINDOW):
        warnings.setdefault(ended.name, []).extend(ended.undo())
    if not warnings:
        return False
    recalled = [step for step in result.steps if _recall(session, step, warnings, asked)]
    if recalled and result.status == "ok":  # the stop came as the last step ended
        result.status, result.error, result.outputs = "cancelled", "interrupted", {}
    return bool(recalled)


def _recall(
    session: Session, step: StepResult, warnings: dict[str, list[str]], asked: float
) -> bool:
    """Record ``step`` cancelled if one of its tools' runs (or of its slices' or
    nested steps') was taken back; whether one was."""
    parts = step.slices or step.details.get("steps") or []
    inner = [part for part in parts if _recall(session, part, warnings, asked)]
    own = warnings.get(step.name)
    if own is None and not inner:
        return False
    if own:
        step.warnings = list(dict.fromkeys([*step.warnings, *own]))
    if step.status == "ok":
        step.status, step.outputs = "cancelled", {}
        step.error = (
            _why(step, asked) if own is not None else f"{inner[0].name!r}: {inner[0].error}"
        )
    session.emit_finished(step)
    return True


def _why(step: StepResult, asked: float) -> str:
    """The error of a step whose ``ok`` was taken back."""
    ended = step.finished if step.finished is not None else asked
    return (
        f"interrupted: it ended {max(0.0, asked - ended):.1f} s before the stop, as a tool"
        " that the same signal stopped does, so its exit 0 is not trusted; it runs again"
        " next time"
    )
