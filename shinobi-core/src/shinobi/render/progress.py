"""Progress while a recipe runs: a live view on a terminal, plain lines otherwise.

The live view redraws one status line per running step plus a summary, at
most ten times a second, on stderr; in a pipe or a CI log it prints one line
per step start and finish instead, which is what a log reader wants.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import IO, Any

from shinobi.steps.result import StepResult

__all__ = ["LiveProgress", "PlainProgress", "make_progress"]

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


class LiveProgress(PlainProgress):
    """A redrawn view of running steps, with finished ones scrolling above it."""

    def __init__(self, stream: IO[str], total: int) -> None:
        super().__init__(stream, total)
        self.running: dict[str, float] = {}
        self.counts = {"done": 0, "failed": 0, "skipped": 0, "cancelled": 0}
        self.drawn = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True, name="shinobi-progress")
        self.thread.start()

    def _clear(self) -> None:
        if self.drawn:
            self.stream.write(f"\x1b[{self.drawn}F\x1b[J")
            self.drawn = 0

    def _draw(self) -> None:
        now = time.monotonic()
        lines = [f"  running {name}  {now - t:6.1f}s" for name, t in list(self.running.items())[:8]]
        if len(self.running) > 8:
            lines.append(f"  ... and {len(self.running) - 8} more running")
        waiting = max(0, self.total - sum(self.counts.values()) - len(self.running))
        cancelled = self.counts["cancelled"]
        lines.append(
            f"  {self.counts['done']} done, {len(self.running)} running, {waiting} waiting,"
            f" {self.counts['failed']} failed{f', {cancelled} cancelled' if cancelled else ''}"
            f"  [{now - self.start:.1f}s]"
        )
        self.stream.write("\n".join(lines) + "\n")
        self.drawn = len(lines)
        self.stream.flush()

    def _tick(self) -> None:
        while not self.stop.wait(0.1):
            with self.lock:
                self._clear()
                self._draw()

    def _line(self, text: str) -> None:
        with self.lock:
            self._clear()
            self.stream.write(f"[{time.monotonic() - self.start:7.1f}s] {text}\n")
            self._draw()

    def step_started(self, name: str, info: dict[str, Any]) -> None:
        with self.lock:
            self.running[name] = time.monotonic()

    def step_finished(self, result: StepResult) -> None:
        with self.lock:
            self.running.pop(result.name, None)
            key = result.status if result.status in self.counts else "done"
            self.counts[key] += 1  # a cancelled step did not fail: the run was stopped
        super().step_finished(result)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        with self.lock:
            self._clear()
            self.stream.flush()


def make_progress(total: int, stream: IO[str] | None = None) -> PlainProgress:
    """A live view on a terminal, plain lines elsewhere, nothing where there is no stderr.

    Started with its standard streams closed (``>&- 2>&-``, as cron or a
    daemon may), Python has no ``sys.stderr`` at all: the run goes on, and
    its progress goes nowhere rather than ending it.
    """
    out = stream or sys.stderr
    if out is None:
        import os

        return PlainProgress(open(os.devnull, "w"), total)  # lives as long as the run
    if out.isatty():
        return LiveProgress(out, total)
    return PlainProgress(out, total)
