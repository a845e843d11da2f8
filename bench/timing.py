"""Repeating a measurement and reducing it to a median.

The machine the suite runs on is shared (builds and test runs come and go),
so one sample says little: every figure is the median of several, and the
individual samples are kept in the results file so a noisy run is visible as
such rather than silently averaged away.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "CACHE_DISABLED",
    "CommandFailed",
    "Samples",
    "Timing",
    "bench_env",
    "cpu_seconds",
    "repeat",
    "run_timed",
    "timed",
]


class CommandFailed(RuntimeError):
    """A measured command exited non-zero: its figure would be meaningless."""


class Timing(NamedTuple):
    """One repetition: wall seconds, and the CPU seconds (user + system) it consumed.

    CPU time includes every process the measured one waited for (the steps'
    tools too). On a loaded machine wall time stretches with the queue for a
    core while CPU time barely moves, so the pair tells contention apart from
    work.
    """

    wall: float
    cpu: float


@dataclass
class Samples:
    """The repetitions of one measurement."""

    timings: list[Timing] = field(default_factory=list)

    def add(self, timing: Timing) -> None:
        self.timings.append(timing)

    @property
    def wall(self) -> list[float]:
        return [t.wall for t in self.timings]

    @property
    def cpu(self) -> list[float]:
        return [t.cpu for t in self.timings]

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)


def cpu_seconds() -> float:
    """CPU used so far by this process and every child it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Timing:
    """Wall and CPU time of ``call(*args, **kwargs)`` in this process."""
    cpu, wall = cpu_seconds(), time.perf_counter()
    call(*args, **kwargs)
    return Timing(time.perf_counter() - wall, cpu_seconds() - cpu)


#: What a measured ``ninja run`` with the step cache disabled gets in its environment:
#: no entry looked up, none stored (``--no-cache`` runs every step, but stores them).
CACHE_DISABLED = {"SHINOBI_CACHE_ENABLED": "0"}


def bench_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every measured process gets.

    No ``SHINOBI_*`` variable leaks in from the caller and the user config file
    points nowhere, so a personal setting cannot change a figure. Bytecode
    writing is switched back on: a normal install has compiled ``.pyc`` files,
    and a sandbox that sets ``PYTHONDONTWRITEBYTECODE`` would otherwise make
    every start-up figure include compiling click and pydantic from source.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SHINOBI_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["SHINOBI_CONFIG"] = os.devnull
    env.update(extra or {})
    return env


#: Seconds after which a measured command is killed: a regression that makes a
#: 100,000-step recipe quadratic must end the suite with a message, not hang it.
COMMAND_TIMEOUT = 900.0


def run_timed(
    argv: Sequence[str],
    *,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    stdout: Path | None = None,
) -> Timing:
    """One run of ``argv``; raises :class:`CommandFailed` on a non-zero exit.

    Output goes to ``stdout`` (or nowhere); stderr goes to a scratch file,
    read back only to explain a failure. The CPU time is the child's own
    rusage (``wait4``), which includes every process it waited for.
    """
    with (
        open(stdout or os.devnull, "wb") as out,
        tempfile.TemporaryFile() as err,
    ):
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else bench_env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        watchdog = threading.Timer(COMMAND_TIMEOUT, proc.kill)  # wait4 has no timeout
        watchdog.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            watchdog.cancel()
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if elapsed >= COMMAND_TIMEOUT:
            raise CommandFailed(
                f"{' '.join(argv)} did not finish in {COMMAND_TIMEOUT:.0f} s and was killed:"
                " far past every target (a cost that grows faster than the recipe?)"
            )
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            raise CommandFailed(
                f"{' '.join(argv)} exited {proc.returncode}: {' | '.join(tail) or 'no stderr'}"
            )
    return Timing(elapsed, usage.ru_utime + usage.ru_stime)


def repeat(times: int, measure: Callable[[], Timing], warmup: int = 1) -> Samples:
    """``measure()`` run ``warmup`` times unrecorded, then ``times`` times recorded."""
    for _ in range(warmup):
        measure()
    samples = Samples()
    for _ in range(times):
        samples.add(measure())
    return samples
