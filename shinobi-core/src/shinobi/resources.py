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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

__all__ = [
    "Budget",
    "Resources",
    "Ticket",
    "detect_cpus",
    "detect_memory",
    "format_size",
    "parse_size",
    "refuse_unitless",
]


def _units() -> dict[str, int]:
    """Suffix (upper case) -> bytes: ``G``/``GB`` decimal; ``GiB`` (and ``Gi``) binary."""
    units = {"": 1, "B": 1}
    for power, letter in enumerate("KMGTP", start=1):
        units[letter] = units[f"{letter}B"] = 1000**power
        units[f"{letter}IB"] = units[f"{letter}I"] = 1024**power
    return units


_UNITS = _units()
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*$", re.ASCII)  # not "٣GiB"
_HINT = "write e.g. '512MiB', '200GB', '1.5TiB' or a whole number of bytes"


def parse_size(value: int | float | str) -> int:
    """Bytes in ``value`` (``"512MiB"``, ``"1.5GB"``, ``4096``); raises ValueError.

    Fractions are computed exactly (``"0.1GB"`` is 100,000,000 bytes, not one
    more because of binary floating point) and rounded up to a whole byte.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r} ({_HINT})")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a size cannot be negative: {value!r}")
        return value
    if isinstance(value, float):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"not a size: {value!r} ({_HINT})")
        return math.ceil(Fraction(value))
    if not isinstance(value, str):
        raise ValueError(f"not a size: {value!r} ({_HINT})")
    match = _SIZE.match(value)
    if not match:
        raise ValueError(f"not a size: {value!r} ({_HINT})")
    number, unit = match.groups()
    factor = _UNITS.get(unit.upper())
    if factor is None:
        raise ValueError(
            f"unknown size unit {unit!r} in {value!r} (use B, KB/KiB, MB/MiB, GB/GiB, TB/TiB,"
            " PB/PiB: SI units are powers of 1000, IEC units powers of 1024)"
        )
    return math.ceil(Fraction(number) * factor)


#: A memory size below this is a number written without its unit: ``memory=16``
#: meant 16 GiB, not 16 bytes, and no program fits in less than a MiB anyway.
SMALLEST_MEMORY = 1024**2


def refuse_unitless(size: int, what: str, written: object) -> None:
    """Refuse a memory size too small to be meant (raises ValueError), where it is written.

    A bare number is bytes, so ``16`` slips through parsing and only fails
    later: a container runtime refuses it mid-run, Slurm rounds it up to
    ``--mem=1M``. ``what`` names the setting ("a run's memory budget");
    ``written`` is the value as given, so a size written with its unit
    (``"1M"``) is told the least it may be, not to write the unit it has.
    """
    if not 0 < size < SMALLEST_MEMORY:
        return
    least = format_size(SMALLEST_MEMORY)
    if _bare(written):
        raise ValueError(
            f"{what} of {size} bytes is too small to be meant (a bare number is bytes):"
            f" write the unit, e.g. '64GiB' (the least is {least})"
        )
    raise ValueError(f"{what} of {size} bytes is too small to be meant: give at least {least}")


def _bare(written: object) -> bool:
    """Whether a size was written as a number without a unit (``16``, ``"16"``)."""
    if isinstance(written, str):
        match = _SIZE.match(written)
        return match is not None and not match.group(2)
    return True


def format_size(size: int) -> str:
    """A byte count in the largest IEC unit that keeps it readable."""
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            value = size / factor
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return f"{size}B"


def _parse_cpus(cpus: object) -> float | Literal["all"] | None:
    if cpus is None:
        return None
    if isinstance(cpus, str) and cpus.strip().lower() == "all":
        return "all"
    if (
        isinstance(cpus, bool)
        or not isinstance(cpus, int | float)
        or not math.isfinite(cpus)
        or cpus <= 0
    ):
        raise ValueError(f"Resources(cpus={cpus!r}): cpus must be a positive number or 'all'")
    if cpus < MIN_CPUS:  # written --cpus 0, which docker reads as no limit at all
        raise ValueError(
            f"Resources(cpus={cpus!r}): cpus must be at least {MIN_CPUS:g} (a container"
            " engine takes no less); declare more, or leave it out"
        )
    return float(cpus)


#: The fewest CPUs a step may declare; an engine may want more (docker a hundredth),
#: and says so when the step starts.
MIN_CPUS = 0.001


@dataclass(frozen=True, slots=True, init=False)
class Resources:
    """A step's declared footprint: ``Resources(cpus=16, memory="200GiB")``.

    ``cpus="all"`` means "whatever this run may use", resolved against the
    budget when the step is admitted. Anything left as None is undeclared, and
    undeclared is free.
    """

    cpus: float | Literal["all"] | None
    memory: int | None

    def __init__(
        self,
        cpus: float | int | Literal["all"] | None = None,
        memory: int | float | str | None = None,
    ) -> None:
        object.__setattr__(self, "cpus", _parse_cpus(cpus))
        try:
            size = None if memory is None else parse_size(memory)
        except ValueError as exc:
            raise ValueError(f"Resources(memory={memory!r}): {exc}") from None
        if size == 0:  # a limit no tool fits in; leave it out to declare nothing
            raise ValueError(
                f"Resources(memory={memory!r}): memory must be more than 0 (leave it out"
                " to declare none)"
            )
        if size is not None:
            refuse_unitless(size, f"Resources(memory={memory!r}): a step's memory", memory)
        object.__setattr__(self, "memory", size)

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

    def over(self, base: Resources) -> Resources:
        """These resources, with what they leave undeclared taken from ``base``:
        ``add_step(resources=Resources(cpus=1))`` of a cab that declares its memory
        keeps that memory (replaced whole, the memory limit went with it)."""
        merged = object.__new__(Resources)
        object.__setattr__(merged, "cpus", base.cpus if self.cpus is None else self.cpus)
        object.__setattr__(merged, "memory", base.memory if self.memory is None else self.memory)
        return merged


# -- the run's budget ---------------------------------------------------------


_CGROUP_ROOT = "/sys/fs/cgroup"


def _ancestors(root: str, path: str) -> Iterator[str]:
    """``root + path`` and every directory above it up to ``root``.

    Limits are hierarchical (a parent's limit binds its children), and inside
    a container without a cgroup namespace the path names the host's view, so
    only the root exists there and it is the container's own cgroup.
    """
    parts = [p for p in path.split("/") if p]
    for depth in range(len(parts), -1, -1):
        yield "/".join([root, *parts[:depth]])


def _cgroup_dirs(
    controller: str, proc_cgroup: str = "/proc/self/cgroup", root: str = _CGROUP_ROOT
) -> list[str]:
    """Directories that may hold limits of ``controller`` ("cpu" or "memory") for us.

    Both hierarchies are read: cgroup v2 (``0::/path``, mounted at the root or,
    on a hybrid host, at ``unified``) and v1 (``N:cpu,cpuacct:/path``).
    """
    try:
        with open(proc_cgroup) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    dirs: list[str] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            for mount in (root, f"{root}/unified"):
                dirs.extend(_ancestors(mount, path))
        elif controller in controllers.split(","):
            for mount in (f"{root}/{controller}", f"{root}/{controllers}"):
                dirs.extend(_ancestors(mount, path))
    return list(dict.fromkeys(dirs))


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read().strip()
    except OSError:
        return None


def _quota(directory: str) -> float | None:
    """The CPU quota set on one cgroup directory, in CPUs (None: unlimited)."""
    v2 = _read(f"{directory}/cpu.max")
    if v2:
        limit, _, period = v2.partition(" ")
        if limit != "max" and period.isdigit() and int(period) > 0:
            return int(limit) / int(period)
    quota = _read(f"{directory}/cpu.cfs_quota_us")
    period_v1 = _read(f"{directory}/cpu.cfs_period_us")
    # v1 writes -1 for "no quota", which isdigit() rejects.
    if quota and period_v1 and quota.isdigit() and period_v1.isdigit() and int(period_v1):
        return int(quota) / int(period_v1)
    return None


def detect_cpus(proc_cgroup: str = "/proc/self/cgroup", root: str = _CGROUP_ROOT) -> float:
    """CPUs this process may really use: its affinity (which a cpuset narrows),
    then the tightest CPU quota of its cgroups and their ancestors."""
    try:
        count = float(len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        count = float(os.cpu_count() or 1)
    for directory in _cgroup_dirs("cpu", proc_cgroup, root):
        quota = _quota(directory)
        if quota is not None and quota > 0:
            count = min(count, quota)
    return count


#: cgroup v1 reports "no limit" as a huge page-aligned number, not "max".
_UNLIMITED = 1 << 60


def _physical_memory() -> int:
    """RAM from the C library, where ``/proc/meminfo`` cannot be read (macOS, a masked /proc).

    0 only where even that is unknown; a budget of 0 bytes would refuse every run.
    """
    try:
        return max(0, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return 0


def detect_memory(
    proc_cgroup: str = "/proc/self/cgroup",
    root: str = _CGROUP_ROOT,
    meminfo: str = "/proc/meminfo",
) -> int:
    """Bytes this process may really use: RAM, then the tightest memory limit of
    its cgroups and their ancestors."""
    total = 0
    for line in (_read(meminfo) or "").splitlines():
        if line.startswith("MemTotal:"):
            total = int(line.split()[1]) * 1024
    total = total or _physical_memory()
    for directory in _cgroup_dirs("memory", proc_cgroup, root):
        for name in ("memory.max", "memory.limit_in_bytes"):
            value = _read(f"{directory}/{name}")
            if value and value.isdigit() and 0 < int(value) < _UNLIMITED:
                total = min(total, int(value)) if total else int(value)
    return total


def _nothing() -> None:
    """The default wake-up: a caller that polls ``Ticket.granted`` needs none."""


class Ticket:
    """A step waiting for, or holding, its share of the budget.

    ``cpus`` is what the step is charged; for ``cpus="all"`` it is filled in
    when the budget admits the step, from the budget's size at that moment.
    """

    __slots__ = ("all_cpus", "cpus", "granted", "memory", "name", "oversized", "wake")

    def __init__(
        self,
        name: str,
        cpus: float,
        memory: int,
        wake: Callable[[], None],
        *,
        all_cpus: bool = False,
    ) -> None:
        self.name = name
        self.cpus = cpus
        self.memory = memory
        self.wake = wake
        self.all_cpus = all_cpus
        self.granted = False
        self.oversized = False


class Budget:
    """The CPUs and memory one run may use, shared by every recipe of the run.

    Waiters are served first come, first served: a large step at the head of
    the queue is never overtaken by smaller ones behind it, whichever recipe
    of the run they belong to. A step larger than the whole budget could never
    fit by waiting, so it is admitted as soon as it is at the head and nothing
    else holds a share; it then runs alone, holding every other declared step
    back until it finishes.
    """

    def __init__(self, cpus: float, memory: int | str | None = None) -> None:
        # Memory that cannot be found out at all gates nothing, rather than every run.
        size = (detect_memory() or _UNLIMITED) if memory is None else parse_size(memory)
        if cpus <= 0 or size <= 0:
            raise ValueError(f"a budget needs positive cpus and memory, not {cpus}, {memory}")
        self.cpus = float(cpus)
        self.memory = size
        self.free_cpus = self.cpus
        self.free_memory = self.memory
        self._queue: deque[Ticket] = deque()
        self._held = 0
        self._exclusive = False
        self._lock = threading.Lock()

    @classmethod
    def for_this_process(cls, cpus: float | None = None, memory: int | str | None = None) -> Budget:
        """The budget of a run here: configured sizes, else what this process may use."""
        return cls(cpus if cpus is not None else detect_cpus(), memory)

    def request(
        self, name: str, resources: Resources | None, wake: Callable[[], None] = _nothing
    ) -> Ticket | None:
        """Join the queue; None when nothing is declared (undeclared is free).

        ``wake`` is called (under the budget's lock, so it must only signal)
        when the ticket is granted; a ticket granted at once is returned granted.
        """
        if resources is None or not resources.declared:
            return None
        all_cpus = resources.cpus == "all"
        cpus = 0.0 if resources.cpus is None or resources.cpus == "all" else resources.cpus
        ticket = Ticket(name, cpus, resources.memory or 0, wake, all_cpus=all_cpus)
        ticket.oversized = cpus > self.cpus + 1e-9 or ticket.memory > self.memory
        with self._lock:
            self._queue.append(ticket)
            self._grant_locked()
        return ticket

    def _grant_locked(self) -> None:
        while self._queue and not self._exclusive:
            head = self._queue[0]
            if head.all_cpus:
                head.cpus = self.cpus  # "all" is resolved against the pool when admitted
            if head.oversized:
                if self._held:
                    return
                self._exclusive = True
            elif head.cpus > self.free_cpus + 1e-9 or head.memory > self.free_memory:
                return
            self._queue.popleft()
            self.free_cpus -= head.cpus
            self.free_memory -= head.memory
            self._held += 1
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
                self._held -= 1
                if ticket.oversized:
                    self._exclusive = False
            elif ticket in self._queue:
                self._queue.remove(ticket)
            self._grant_locked()

    @property
    def waiting(self) -> int:
        """How many declared steps are queued for a share."""
        with self._lock:
            return len(self._queue)

    def describe(self) -> str:
        return f"cpus={self.cpus:g} mem={format_size(self.memory)}"
