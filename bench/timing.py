"""Repeating a measurement and reducing it to a median.

The machine the suite runs on is shared (builds and test runs come and go),
so one sample says little: every figure is the median of several, and the
individual samples are kept in the results file so a noisy run is visible as
such rather than silently averaged away.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CommandFailed", "Samples", "bench_env", "repeat", "run_timed"]


class CommandFailed(RuntimeError):
    """A measured command exited non-zero: its figure would be meaningless."""


@dataclass
class Samples:
    """Seconds taken by each repetition of one measurement."""

    seconds: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.seconds.append(value)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)


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


def run_timed(
    argv: Sequence[str],
    *,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    stdout: Path | None = None,
) -> float:
    """Wall seconds of one run of ``argv``; raises :class:`CommandFailed` on a non-zero exit.

    Output goes to ``stdout`` (or nowhere); stderr is kept in memory only to
    explain a failure.
    """
    with open(stdout or os.devnull, "wb") as out:
        started = time.perf_counter()
        proc = subprocess.run(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else bench_env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.PIPE,
            check=False,
        )
        elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise CommandFailed(
            f"{' '.join(argv)} exited {proc.returncode}: {' | '.join(tail) or 'no stderr'}"
        )
    return elapsed


def repeat(times: int, measure: Callable[[], float], warmup: int = 1) -> Samples:
    """``measure()`` run ``warmup`` times unrecorded, then ``times`` times recorded."""
    for _ in range(warmup):
        measure()
    samples = Samples()
    for _ in range(times):
        samples.add(measure())
    return samples
