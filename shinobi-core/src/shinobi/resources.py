"""What a step declares it costs, and sizes written the way people write them.

Sizes are exact to the byte: SI suffixes are decimal (``200GB`` = 200x1000^3)
and IEC suffixes binary (``200GiB`` = 200x1024^3), because a 7% disagreement
between a declaration and a cgroup limit is the difference between a job that
fits and one that is killed.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Budget",
    "Resources",
    "Ticket",
    "detect_cpus",
    "detect_memory",
    "format_size",
    "parse_size",
]

_UNITS = {
    "": 1,
    "B": 1,
    "K": 1000,
    "KB": 1000,
    "M": 1000**2,
    "MB": 1000**2,
    "G": 1000**3,
    "GB": 1000**3,
    "T": 1000**4,
    "TB": 1000**4,
    "P": 1000**5,
    "PB": 1000**5,
    "KIB": 1024,
    "MIB": 1024**2,
    "GIB": 1024**3,
    "TIB": 1024**4,
    "PIB": 1024**5,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def parse_size(value: int | float | str) -> int:
    """Bytes in ``value`` (``"512MiB"``, ``"1.5GB"``, ``4096``); raises ValueError."""
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"a size cannot be negative: {value!r}")
        return math.ceil(value)
    match = _SIZE.match(value)
    if not match:
        raise ValueError(f"not a size: {value!r} (write e.g. '512MiB', '200GB' or '2TiB')")
    number, unit = match.groups()
    factor = _UNITS.get(unit.upper())
    if factor is None:
        raise ValueError(
            f"unknown size unit {unit!r} in {value!r} (use B, KB/KiB, MB/MiB, GB/GiB, TB/TiB)"
        )
    return math.ceil(float(number) * factor) if "." in number else int(number) * factor


def format_size(size: int) -> str:
    """A byte count in the largest IEC unit that keeps it readable."""
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            value = size / factor
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return f"{size}B"


@dataclass(frozen=True, slots=True, init=False)
class Resources:
    """A step's declared footprint: ``Resources(cpus=16, memory="200GiB")``.

    ``cpus="all"`` means "whatever this machine has", resolved when the step is
    admitted. Anything left as None is undeclared, and undeclared is free.
    """

    cpus: float | Literal["all"] | None
    memory: int | None

    def __init__(
        self,
        cpus: float | int | Literal["all"] | None = None,
        memory: int | float | str | None = None,
    ) -> None:
        if cpus is not None and cpus != "all":
            if isinstance(cpus, bool) or not isinstance(cpus, int | float) or cpus <= 0:
                raise ValueError(f"cpus must be a positive number or 'all', not {cpus!r}")
            cpus = float(cpus)
        object.__setattr__(self, "cpus", cpus)
        object.__setattr__(self, "memory", None if memory is None else parse_size(memory))

    @property
    def declared(self) -> bool:
        return self.cpus is not None or self.memory is not None

    def describe(self) -> str:
        """``cpus=16 mem=200GiB`` for boxes, logs and manifests."""
        parts = []
        if self.cpus is not None:
            parts.append("cpus=all" if self.cpus == "all" else f"cpus={self.cpus:g}")
        if self.memory is not None:
            parts.append(f"mem={format_size(self.memory)}")
        return " ".join(parts) or "undeclared"

    def to_json(self) -> dict[str, object]:
        return {"cpus": self.cpus, "memory": self.memory}


# -- the run's budget ---------------------------------------------------------


def _own_cgroup_dirs() -> list[str]:
    """Directories of this process's cgroups, v2 unified and v1 per controller."""
    dirs: list[str] = []
    try:
        with open("/proc/self/cgroup") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return dirs
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
                dirs.append(root + path)
        else:
            for controller in controllers.split(","):
                dirs.append(f"/sys/fs/cgroup/{controller}{path}")
                dirs.append(f"/sys/fs/cgroup/{controller}")
    return dirs


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read().strip()
    except OSError:
        return None


def detect_cpus() -> float:
    """CPUs this process may really use: affinity, then any cgroup CPU quota."""
    try:
        count = float(len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        count = float(os.cpu_count() or 1)
    for directory in _own_cgroup_dirs():
        quota = _read(f"{directory}/cpu.max")
        if quota:
            limit, _, period = quota.partition(" ")
            if limit != "max" and period:
                count = min(count, int(limit) / int(period))
        v1 = _read(f"{directory}/cpu.cfs_quota_us")
        period_v1 = _read(f"{directory}/cpu.cfs_period_us")
        if v1 and period_v1 and int(v1) > 0:
            count = min(count, int(v1) / int(period_v1))
    return max(count, 1.0)


def detect_memory() -> int:
    """Bytes this process may really use: RAM, then any cgroup memory limit."""
    total = 0
    meminfo = _read("/proc/meminfo") or ""
    for line in meminfo.splitlines():
        if line.startswith("MemTotal:"):
            total = int(line.split()[1]) * 1024
    for directory in _own_cgroup_dirs():
        for name in ("memory.max", "memory.limit_in_bytes"):
            value = _read(f"{directory}/{name}")
            if value and value.isdigit() and int(value) < (1 << 60):
                total = min(total, int(value)) if total else int(value)
    return total


class Ticket:
    """A step waiting for, or holding, its share of the budget."""

    __slots__ = ("cpus", "granted", "memory", "name", "oversized", "wake")

    def __init__(self, name: str, cpus: float, memory: int, wake: Callable[[], None]) -> None:
        self.name = name
        self.cpus = cpus
        self.memory = memory
        self.wake = wake
        self.granted = False
        self.oversized = False


class Budget:
    """The CPUs and memory one run may use, shared by every recipe of the run.

    Waiters are served first come, first served: a large step at the head of
    the queue is never overtaken by smaller ones behind it. A step larger than
    the whole budget is admitted when it reaches the head (waiting could never
    make it fit) and holds everything else back until it finishes.
    """

    def __init__(self, cpus: float, memory: int) -> None:
        self.cpus = float(cpus)
        self.memory = int(memory)
        self.free_cpus = self.cpus
        self.free_memory = self.memory
        self._queue: deque[Ticket] = deque()
        self._lock = threading.Lock()

    @classmethod
    def for_this_process(
        cls, cpus: float | None = None, memory: int | str | None = None
    ) -> Budget:
        return cls(
            cpus if cpus is not None else detect_cpus(),
            parse_size(memory) if memory is not None else detect_memory(),
        )

    def request(
        self, name: str, resources: Resources | None, wake: Callable[[], None]
    ) -> Ticket | None:
        """Join the queue; None when nothing is declared (undeclared is free)."""
        if resources is None or not resources.declared:
            return None
        cpus = 0.0 if resources.cpus is None else (
            self.cpus if resources.cpus == "all" else float(resources.cpus)
        )
        ticket = Ticket(name, cpus, resources.memory or 0, wake)
        ticket.oversized = cpus > self.cpus or ticket.memory > self.memory
        with self._lock:
            self._queue.append(ticket)
            self._grant_locked()
        return ticket

    def _grant_locked(self) -> None:
        while self._queue:
            head = self._queue[0]
            fits = head.cpus <= self.free_cpus + 1e-9 and head.memory <= self.free_memory
            if not fits and not head.oversized:
                return
            self._queue.popleft()
            self.free_cpus -= head.cpus
            self.free_memory -= head.memory
            head.granted = True
            head.wake()

    def release(self, ticket: Ticket | None) -> None:
        """Give a granted ticket's share back, or leave the queue if still waiting."""
        if ticket is None:
            return
        with self._lock:
            if ticket.granted:
                ticket.granted = False
                self.free_cpus += ticket.cpus
                self.free_memory += ticket.memory
            elif ticket in self._queue:
                self._queue.remove(ticket)
            self._grant_locked()

    def describe(self) -> str:
        return f"cpus={self.cpus:g} mem={format_size(self.memory)}"
