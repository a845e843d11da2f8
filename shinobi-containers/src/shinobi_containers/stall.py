"""Steps stuck at their memory limit, which the kernel neither lets run nor kills.

Under a cgroup memory limit the kernel reclaims before it kills, and it tries
again for as long as reclaim frees anything at all. A step whose memory is
all anonymous (and there is no swap) can still give up file pages: its own
program text. Then each failed charge evicts the text, the next instruction
faults it back in, and the out-of-memory killer is never called. Seen on
cgroup v1 with apptainer, in about half the runs of a pipe whose reader
hoards its input: ``head`` spun in the kernel for over ten minutes, 0% user
time, its I/O counters frozen, the cgroup's fail count climbing 35,000 a
second. The step never ends, and nothing says why.

:class:`StallWatch` samples the step's memory cgroup and its processes once a
second. A step is *stalled* when, over a whole window, every sample found
the cgroup failing charges at its limit while its processes moved no byte of
I/O, none started or ended, and together they ran in user mode for at most 1%
of the time. A step doing real work at its limit (computing, streaming a
file through a small page cache, writing a large buffer) moves one of those.
Then its largest process is killed with SIGKILL, as the kernel would have
done, and the step is reported out of memory. Where a process's counters cannot be read, nothing is
judged stalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from shinobi.teardown import process_table

__all__ = [
    "MemoryCgroup",
    "Sample",
    "StallJudge",
    "StallWatch",
    "memory_cgroup_of",
    "take_sample",
]

#: Seconds between samples.
INTERVAL = 1.0
#: The longest pause between two searches of /proc for the payload's cgroup.
SEARCH_CEILING = 30.0
#: Usage this close to the limit counts as at it (the kernel keeps a few pages in flux).
AT_LIMIT_MARGIN = 1 << 20
#: The share of the window its processes may run in user mode and still be stalled.
USER_SHARE = 0.01
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class MemoryCgroup:
    """A memory cgroup's directory, in the layout of its cgroup version."""

    path: Path
    version: int

    def _read(self, name: str) -> str:
        return (self.path / name).read_text()

    def usage(self) -> int:
        return int(self._read("memory.usage_in_bytes" if self.version == 1 else "memory.current"))

    def limit(self) -> int | None:
        raw = self._read("memory.limit_in_bytes" if self.version == 1 else "memory.max").strip()
        # v1 says "no limit" with a huge number, v2 with "max"
        return None if raw == "max" or int(raw) >= 1 << 62 else int(raw)

    def failures(self) -> int:
        """How often a charge hit the limit (v1 ``failcnt``, v2 the ``max`` event)."""
        if self.version == 1:
            return int(self._read("memory.failcnt"))
        for line in self._read("memory.events").splitlines():
            key, _, value = line.partition(" ")
            if key == "max":
                return int(value)
        return 0

    def pids(self) -> frozenset[int]:
        return frozenset(int(line) for line in self._read("cgroup.procs").split())


def _mounts(mountinfo: str) -> tuple[Path | None, Path | None]:
    """Where cgroup v1's memory controller and cgroup v2 are mounted, if they are."""
    v1 = v2 = None
    for line in mountinfo.splitlines():
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        if rest[0] == "cgroup" and "memory" in rest[2].split(",") and v1 is None:
            v1 = Path(fields[4])
        elif rest[0] == "cgroup2" and v2 is None:
            v2 = Path(fields[4])
    return v1, v2


def memory_cgroup_of(pid: int, proc: Path = Path("/proc")) -> MemoryCgroup | None:
    """The memory cgroup process ``pid`` is in: v1's memory hierarchy where the
    host has one (a hybrid host also mounts an empty v2), else v2's."""
    try:
        lines = (proc / str(pid) / "cgroup").read_text().splitlines()
        v1_mount, v2_mount = _mounts((proc / "self" / "mountinfo").read_text())
    except OSError:
        return None
    v1_path = v2_path = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            v1_path = path
        elif controllers == "":
            v2_path = path
    if v1_path is not None and v1_mount is not None:
        return MemoryCgroup(v1_mount / v1_path.lstrip("/"), 1)
    if v2_path is not None and v2_mount is not None:
        return MemoryCgroup(v2_mount / v2_path.lstrip("/"), 2)
    return None


@dataclass(frozen=True, slots=True)
class Sample:
    """One look at a cgroup and its processes.

    ``io`` is the bytes its processes have read, written and dirtied, summed;
    None when a process's counters could not be read (then nothing is judged).
    """

    at: float
    usage: int
    limit: int | None
    failures: int
    pids: frozenset[int]
    user_ticks: int
    io: int | None

    @property
    def at_limit(self) -> bool:
        return self.limit is not None and self.usage >= self.limit - AT_LIMIT_MARGIN


def _process_counters(pids: Iterable[int], proc: Path) -> tuple[int, int | None]:
    """Their user-mode ticks and their I/O bytes (None if any was unreadable)."""
    ticks, io = 0, 0
    for pid in pids:
        try:
            stat = (proc / str(pid) / "stat").read_text()
            counters = (proc / str(pid) / "io").read_text()
            ticks += int(stat.rpartition(")")[2].split()[11])  # utime, field 14
            for line in counters.splitlines():
                key, _, value = line.partition(":")
                if key in ("rchar", "wchar", "write_bytes"):
                    io += int(value)
        except (OSError, ValueError, IndexError):  # gone, or not ours to read
            return ticks, None
    return ticks, io


def take_sample(cgroup: MemoryCgroup, proc: Path = Path("/proc")) -> Sample | None:
    """A sample of ``cgroup`` now; None once it is gone."""
    try:
        pids = cgroup.pids()
        sample = (time.monotonic(), cgroup.usage(), cgroup.limit(), cgroup.failures())
    except (OSError, ValueError):
        return None
    ticks, io = _process_counters(pids, proc)
    at, usage, limit, failures = sample
    return Sample(at, usage, limit, failures, pids, ticks, io)


class StallJudge:
    """Decides from a stream of samples whether a step has stalled for ``window`` s."""

    def __init__(self, window: float) -> None:
        self.window = window
        self._last: Sample | None = None
        self._since: Sample | None = None

    def feed(self, sample: Sample) -> bool:
        last, self._last = self._last, sample
        if last is None or not _stuck(last, sample):
            self._since = sample
            return False
        since = self._since or last
        elapsed = sample.at - since.at
        if sample.user_ticks - since.user_ticks > elapsed * _TICKS * USER_SHARE + 1:
            self._since = sample  # it ran: whatever it does, it does it
            return False
        return elapsed >= self.window


def _stuck(before: Sample, after: Sample) -> bool:
    """Between two samples: charges failing at the limit, and no sign of life."""
    return (
        after.at_limit
        and after.failures > before.failures
        and after.pids == before.pids
        and after.io is not None
        and after.io == before.io
    )


class StallWatch:
    """Watches one run's memory cgroup from a thread; kills the run if it stalls.

    ``start`` takes the pid of the engine's client: the payload is found among
    its descendants (as teardown finds a step's processes), in a memory cgroup
    other than ninja's own.
    """

    def __init__(self, window: float, interval: float = INTERVAL) -> None:
        self.window = window
        self.interval = interval
        self.fired = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, client: int) -> None:
        self._thread = threading.Thread(
            target=self._watch, args=(client,), name="shinobi-stall-watch", daemon=True
        )
        self._thread.start()

    def finish(self) -> bool:
        """Stop watching; True if the watch killed the run as stalled."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return self.fired

    def account(self) -> str:
        """What happened, for the step's failure reason."""
        return (
            f"It sat at that limit for {self.window:g} s making no progress (the kernel"
            " kept reclaiming instead of killing it), so shinobi killed it"
            " (backend setting memory_stall_timeout)"
        )

    def _watch(self, client: int) -> None:
        # a watchdog that fails must not print a traceback over the run, nor end it
        with contextlib.suppress(Exception):
            self._watch_until_stopped(client)

    def _watch_until_stopped(self, client: int) -> None:
        cgroup, pause = None, self.interval
        while cgroup is None:  # at once, unless the engine first fetches or builds the image
            if self._stop.wait(pause):
                return
            cgroup = _payload_cgroup(client)
            pause = min(pause * 2, SEARCH_CEILING)
        judge = StallJudge(self.window)
        while not self._stop.wait(self.interval):
            sample = take_sample(cgroup)
            if sample is None:
                return
            if judge.feed(sample) and _kill_largest(sample.pids):
                self.fired = True
                judge = StallJudge(self.window)  # the rest may go on, or stall again


def _payload_cgroup(client: int) -> MemoryCgroup | None:
    """The memory cgroup, with a limit, of the client's nearest descendant outside ours."""
    ours = memory_cgroup_of(os.getpid())
    for pid in process_table().family([client]):  # the client, then all below it
        cgroup = memory_cgroup_of(pid)
        if cgroup is None or cgroup == ours:
            continue
        with contextlib.suppress(OSError, ValueError):
            if cgroup.limit() is not None:
                return cgroup
    return None


def _resident(pid: int) -> int:
    try:
        return int((Path("/proc") / str(pid) / "statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def _kill_largest(pids: Iterable[int]) -> bool:
    """SIGKILL the process with the most resident memory, as the kernel's
    out-of-memory killer would have; True if it was killed here.

    The rest of the container carries on as it does after any out-of-memory
    kill: a pipe's writer gets SIGPIPE, a shell reports 137.
    """
    ranked = sorted(pids, key=_resident, reverse=True)
    for pid in ranked:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue  # ended since the sample; the next largest is the victim
        except PermissionError:
            return False
        return True
    return False
