"""Progress while a recipe runs: a live view on a terminal, plain lines otherwise.

The live view redraws one status line per running step plus a summary, at
most ten times a second, on stderr; in a pipe or a CI log it prints one line
per step start and finish instead, which is what a log reader wants, and
after five minutes without one a line saying what is still running.
"""

from __future__ import annotations

import collections
import math
import os
import sys
import threading
import time
from typing import IO, Any

from shinobi.render.terminal_text import cut, redraws
from shinobi.steps.result import StepResult
from shinobi.wording import listed

__all__ = ["HEARTBEAT", "HeartbeatProgress", "LiveProgress", "PlainProgress", "make_progress"]

_MARK = {
    "ok": "done",
    "failed": "FAILED",
    "skipped": "skipped",
    "cached": "cached",
    "cancelled": "cancelled",
}


class PlainProgress:
    """One line per event: ``[  1.2s] done   make``."""

    def __init__(self, stream: IO[str], total: int) -> None:
        self.stream = stream
        self.total = total
        self.start = time.monotonic()
        self.lock = threading.Lock()

    def _line(self, text: str) -> None:
        with self.lock:
            self.stream.write(f"[{time.monotonic() - self.start:7.1f}s] {text}\n")
            self.stream.flush()

    def step_started(self, name: str, info: dict[str, Any]) -> None:
        self._line(f"start   {name} ({info.get('backend', '?')})")

    def step_finished(self, result: StepResult) -> None:
        detail = ""
        if result.error or result.warnings:  # they may quote what the tool printed
            from shinobi.render.terminal_text import for_terminal

            detail = f": {for_terminal(result.error)}" if result.error else ""
        self._line(f"{_MARK.get(result.status, result.status):<10}{result.name}{detail}")
        for warning in result.warnings:  # what the tool's own output said (wranglers)
            self._line(f"warning: step {result.name}: {for_terminal(warning)}")

    def warning(self, message: str) -> None:
        self._line(f"warning: {message}")

    def close(self) -> None:
        pass


#: Seconds of silence after which plain progress says what is still running.
HEARTBEAT = 300.0

#: Running steps a heartbeat names at most: the rest are counted.
_NAMED = 5


class HeartbeatProgress(PlainProgress):
    """Plain lines, and after each :data:`HEARTBEAT` seconds without one, a line
    naming the steps still running and for how long.

    A step silent for half an hour left a CI log without a line between its
    ``start`` and its ``done``, and many CI systems end a job that prints
    nothing for ten minutes. One thread for the run, not a timer per step.
    """

    def __init__(self, stream: IO[str], total: int, every: float | None = None) -> None:
        super().__init__(stream, total)
        self.every = HEARTBEAT if every is None else every
        self.running: dict[str, float] = {}
        self.said_at = self.start
        self.ended = threading.Event()
        self.beats = threading.Thread(target=self._beat, daemon=True, name="shinobi-heartbeat")
        self.beats.start()

    def _line(self, text: str) -> None:
        super()._line(text)
        self.said_at = time.monotonic()

    def step_started(self, name: str, info: dict[str, Any]) -> None:
        with self.lock:
            self.running[name] = time.monotonic()
        super().step_started(name, info)

    def step_finished(self, result: StepResult) -> None:
        with self.lock:
            self.running.pop(result.name, None)
        super().step_finished(result)

    def _beat(self) -> None:
        while not self.ended.wait(max(0.0, self.said_at + self.every - time.monotonic())):
            if time.monotonic() - self.said_at >= self.every:  # else a line came meanwhile
                self._line(self.still_running())

    def still_running(self) -> str:
        now = time.monotonic()
        with self.lock:
            running = sorted(self.running.items(), key=lambda item: item[1])
        if not running:
            return "still working (no step running now)"
        named = listed(running, _NAMED, lambda step: f"{step[0]} ({now - step[1]:.0f}s)")
        return f"still running: {named}"

    def close(self) -> None:
        self.ended.set()
        self.beats.join()


#: Running steps the live view lists at most: the rest are counted on one line.
_LISTED = 8


def _terminal_size(stream: IO[str]) -> os.terminal_size:
    """The size of the terminal ``stream`` writes to.

    Asked of the stream's own terminal, not of ``shutil.get_terminal_size``,
    which prefers an exported ``COLUMNS`` (a shell's rc file, a script's
    ``export COLUMNS=200``) to the real width: lines cut to a width the
    terminal does not have wrap, and the redraw leaves stale rows behind.
    """
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):  # no terminal under it after all
        return os.terminal_size((80, 24))
    # a terminal whose size was never set says 0 (some CI runners, `docker exec
    # -t` before a resize): unknown, not a view of no columns and no rows
    return os.terminal_size((size.columns or 80, size.lines or 24))


def _is_aggregate(result: StepResult) -> bool:
    """A scattered step's gathered result, or a nested recipe's: its parts were counted."""
    return result.slices is not None or "steps" in result.details


class LiveProgress(PlainProgress):
    """A redrawn view of running steps, with finished ones scrolling above it.

    ``total`` is the number of steps that run a tool (nested recipes' steps
    included). The summary counts units of work, a slice each: a scattered
    step counts as one until it starts and its slices are known
    (:meth:`slices_planned`), so the total grows as the run goes, and a
    40-hour scatter shows how far along it is.
    """

    def __init__(self, stream: IO[str], total: int) -> None:
        super().__init__(stream, total)
        self.running: dict[str, float] = {}
        self.counts = {"done": 0, "cached": 0, "failed": 0, "skipped": 0, "cancelled": 0}
        #: what each step finished was counted as
        self.counted: dict[str, str] = {}
        #: the units of work the scatters planned so far add to ``total``
        self.more = 0
        self.drawn = 0
        #: what a stop signal's handler said, for the drawing thread to print
        self.notices: collections.deque[str] = collections.deque()
        #: when the steps being stopped get SIGKILL (monotonic), once a signal came
        self.kill_at: float | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True, name="shinobi-progress")
        self.thread.start()

    def _clear(self) -> None:
        if self.drawn:
            self.stream.write(f"\x1b[{self.drawn}F\x1b[J")
            self.drawn = 0

    def _listed(self, now: float, room: int) -> list[str]:
        """A row per running step, as many as fit in ``room`` rows with the summary
        below them, the rest counted on one row: a view taller than the terminal
        scrolls its top into the scrollback, where no redraw erases it."""
        running = list(self.running.items())
        fits = len(running) <= _LISTED and len(running) < room
        shown = running if fits else running[: max(0, min(_LISTED, room - 2))]
        lines = [f"  running {name}  {now - t:6.1f}s" for name, t in shown]
        if len(shown) < len(running) and room >= 2:
            lines.append(f"  ... and {len(running) - len(shown)} more running")
        return lines

    def _draw(self) -> None:
        now = time.monotonic()
        size = _terminal_size(self.stream)
        # the cursor waits on the row below the view: the view has one row fewer
        lines = self._listed(now, max(1, size.lines - 1))
        lines.append(self._summary(now))
        # one row each, however narrow the terminal: a wrapped line would take two,
        # and the next redraw would move up too few to erase them (cut by columns:
        # a wide character takes two)
        width = max(1, size.columns - 1)
        self.stream.write("\n".join(cut(line, width) for line in lines) + "\n")
        self.drawn = len(lines)
        self.stream.flush()

    def _summary(self, now: float) -> str:
        """What the run has done, or, once a signal stops it, that it is stopping:
        the grace period is no time for '8 running' as if nothing happened."""
        clock = f"  [{now - self.start:.1f}s]"
        if self.kill_at is not None:
            left = self.kill_at - now
            when = f"SIGKILL in {math.ceil(left)} s" if left > 0 else "SIGKILL sent"
            return f"  stopping: {len(self.running)} steps ({when}){clock}"
        cancelled = self.counts["cancelled"]
        return (
            f"  {self._done()}/{self.total + self.more} done, {len(self.running)} running,"
            f" {self._waiting()} waiting,"
            f" {self.counts['failed']} failed{f', {cancelled} cancelled' if cancelled else ''}"
            f"{clock}"
        )

    def _done(self) -> int:
        return self.counts["done"] + self.counts["cached"]

    def _waiting(self) -> int:
        units = self.total + self.more
        return max(0, units - sum(self.counts.values()) - len(self.running))

    def _tally(self) -> str:
        """How the run's work ended, said as the view is erased: on a terminal
        nothing else is left of it."""
        cached = f" ({self.counts['cached']} cached)" if self.counts["cached"] else ""
        said = [f"{self._done()}/{self.total + self.more} done{cached}"]
        said += [
            f"{count} {what}"
            for what, count in (
                ("failed", self.counts["failed"]),
                ("cancelled", self.counts["cancelled"]),
                ("skipped", self.counts["skipped"]),
                ("not run", self._waiting() + len(self.running)),
            )
            if count
        ]
        return ", ".join(said)

    def _tick(self) -> None:
        while not self.stop.wait(0.1):
            with self.lock:
                self._clear()
                self._say_notices()
                self._draw()

    def stop_notice(self, said: str, kill_in: float) -> bool:
        """Take what a stop signal does (``said``; SIGKILL in ``kill_in`` seconds)
        from its handler, to be printed above the view at the next redraw.

        Called in a signal handler, which may have interrupted this very view
        with its lock held: it takes no lock, it only notes (a deque's append
        needs none), and the drawing thread prints. True: the view says it.
        """
        self.notices.append(said)
        self.kill_at = time.monotonic() + kill_in
        return True

    def _say_notices(self) -> None:
        while self.notices:
            self.stream.write(f"{self.notices.popleft()}\n")

    def _line(self, text: str) -> None:
        with self.lock:
            self._clear()
            self.stream.write(f"[{time.monotonic() - self.start:7.1f}s] {text}\n")
            self._draw()

    def step_started(self, name: str, info: dict[str, Any]) -> None:
        with self.lock:
            self.running[name] = time.monotonic()

    def slices_planned(self, name: str, count: int, steps_each: int) -> None:
        """A scattered step counted as one (each of its steps, for a nested
        recipe) is ``count`` slices of them: more work, or none at all."""
        with self.lock:
            self.more += (count - 1) * steps_each

    def step_finished(self, result: StepResult) -> None:
        with self.lock:
            self.running.pop(result.name, None)
            if not _is_aggregate(result):
                key = result.status if result.status in self.counts else "done"
                self.counts[key] += 1  # a cancelled step did not fail: the run was stopped
                before = self.counted.get(result.name)
                if before is not None:  # said again (an ok a stop took back): counted once
                    self.counts[before] -= 1
                self.counted[result.name] = key
        super().step_finished(result)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        with self.lock:
            self._clear()
            self._say_notices()  # one that came since the last redraw
            self.stream.write(f"[{time.monotonic() - self.start:7.1f}s] {self._tally()}\n")
            self.stream.flush()


def make_progress(
    total: int, stream: IO[str] | None = None, *, heartbeat: bool = False
) -> PlainProgress:
    """A live view on a terminal that takes cursor moves (see
    :func:`~shinobi.render.terminal_text.redraws`), plain lines elsewhere
    (with a ``heartbeat`` line after each :data:`HEARTBEAT` seconds of
    silence, if asked), nothing where there is no stderr.

    Started with its standard streams closed (``>&- 2>&-``, as cron or a
    daemon may), Python has no ``sys.stderr`` at all: the run goes on, and
    its progress goes nowhere rather than ending it.
    """
    out = stream or sys.stderr
    if out is None:
        import os

        return PlainProgress(open(os.devnull, "w"), total)  # lives as long as the run
    if redraws(out):
        return LiveProgress(out, total)
    return HeartbeatProgress(out, total) if heartbeat else PlainProgress(out, total)
