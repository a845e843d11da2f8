"""Out-of-memory kills as the kernel reports them, for engines that do not.

When a container exceeds its memory limit, the kernel kills the largest
process in it, which is often a worker rather than the container's main
process. If the main process shrugs that off and exits 0, the exit code says
nothing, and a product silently missing its worker's share looks like a
success. Docker records such kills (``State.OOMKilled``); podman says
``OOMKilled=false`` even then, and apptainer has no record at all. The
kernel, though, logs every kill with the memory cgroup it happened in::

    oom-kill:constraint=CONSTRAINT_MEMCG,...,task_memcg=/libpod_parent/libpod-<id>,task=tail,pid=12,uid=0

:class:`KernelLog` reads those records from the moment a step starts.
Reading the kernel log needs root (or ``kernel.dmesg_restrict=0``); where it
is unreadable, the engines fall back to reading the exit code alone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

__all__ = ["KernelLog", "OomKill", "OomWatch", "SoleRun", "parse_oom_kill"]

KMSG = "/dev/kmsg"
_MAX_RECORDS = 100_000


@dataclass(frozen=True, slots=True)
class OomKill:
    """One kill by the out-of-memory killer: the victim and its memory cgroup."""

    memcg: str
    task: str
    pid: int
    uid: int


def parse_oom_kill(message: str) -> OomKill | None:
    """The kill a kernel message reports, or None when it reports none."""
    _, marker, rest = message.partition("oom-kill:")
    if not marker:
        return None
    fields = dict(part.split("=", 1) for part in rest.strip().split(",") if "=" in part)
    memcg = fields.get("task_memcg") or fields.get("oom_memcg")
    if memcg is None:
        return None
    try:
        pid = int(fields.get("pid", "-1"))
        uid = int(fields.get("uid", "-1"))
    except ValueError:
        return None
    return OomKill(memcg=memcg, task=fields.get("task", "?"), pid=pid, uid=uid)


class KernelLog:
    """The kernel's messages from the moment this is made; nothing when unreadable."""

    def __init__(self, path: str = KMSG) -> None:
        self._fd: int | None
        try:
            self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            os.lseek(self._fd, 0, os.SEEK_END)
        except OSError:
            self._fd = None

    @property
    def readable(self) -> bool:
        return self._fd is not None

    def oom_kills(self) -> list[OomKill]:
        """Every out-of-memory kill logged since this was made (reads once, then closes)."""
        kills = []
        for record in self._records():
            _, _, message = record.partition(";")
            kill = parse_oom_kill(message)
            if kill is not None:
                kills.append(kill)
        self.close()
        return kills

    def _records(self) -> list[str]:
        if self._fd is None:
            return []
        records = []
        for _ in range(_MAX_RECORDS):
            try:
                data = os.read(self._fd, 8192)
            except BrokenPipeError:
                continue  # records were overwritten before we read them; go on
            except OSError:  # EAGAIN: nothing more
                break
            if not data:
                break
            records.append(data.decode("utf-8", errors="replace"))
        return records

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


class SoleRun:
    """Whether a run was the only one of its kind in flight, from start to end.

    Apptainer names a container's memory cgroup after a pid that is gone by
    the time the log is read, so a kill can be attributed to a run only when
    no other run that could have caused it overlapped it in this process.
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _active: ClassVar[dict[str, dict[int, bool]]] = {}
    _numbers: ClassVar[Iterator[int]] = itertools.count()

    def __init__(self, kind: str) -> None:
        self.kind = kind
        with self._lock:
            self.number = next(self._numbers)
            active = self._active.setdefault(kind, {})
            overlapped = bool(active)
            for other in active:
                active[other] = True
            active[self.number] = overlapped

    def finish(self) -> bool:
        """End the run; True when nothing of the same kind overlapped it."""
        with self._lock:
            overlapped = self._active.get(self.kind, {}).pop(self.number, True)
        return not overlapped


class OomWatch:
    """The kernel's out-of-memory kills during one run.

    ``sole_kind`` names runs whose kills cannot be told apart by cgroup: their
    kills count only when no other run of that kind overlapped this one.
    """

    def __init__(self, sole_kind: str | None = None) -> None:
        self._log = KernelLog()
        self._sole = SoleRun(sole_kind) if sole_kind is not None else None

    def kills(self) -> list[OomKill] | None:
        """The kills logged since the run started; None when they cannot be attributed."""
        sole = self._sole.finish() if self._sole is not None else True
        self._sole = None
        if not sole or not self._log.readable:
            self.close()
            return None
        return self._log.oom_kills()

    def close(self) -> None:
        if self._sole is not None:
            self._sole.finish()
            self._sole = None
        self._log.close()
