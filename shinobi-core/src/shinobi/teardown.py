"""Stopping a step for good: every process it started, confirmed gone.

A step's processes are found two ways, because each misses what the other
sees. Its session id covers grandchildren that moved into process groups of
their own (shells and tools do that often). A tag in the environment
(:data:`TAG_VARIABLE`) covers a process that called ``setsid()`` and so left
the session, daemon-style, since the environment is inherited across both
fork and exec; descendants of either are included as well. Only a process
that leaves the session, wipes its environment and is orphaned escapes.

Teardown is SIGTERM (plus SIGCONT, so a stopped process can act on it), a
grace period, then SIGKILL repeated until nothing is left or ``kill_wait``
runs out; what survives that is reported by pid rather than waited on for
ever (a process in uninterruptible I/O cannot be killed). A workspace is
removed only once teardown has confirmed its processes gone: deleting files
a live tool still writes does not stop it, it only makes its product
silently incomplete.

How processes are seen and signalled goes through a :class:`ProcessTable`,
so tests can stand in for a process that will not die, which cannot be made
on purpose.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from shinobi.steps.result import every_step, first_failed

if TYPE_CHECKING:
    from shinobi.session import Session
    from shinobi.steps.result import RecipeResult, StepResult

__all__ = [
    "INTERRUPTED_LEAVING",
    "KILL_WAIT",
    "TAG_VARIABLE",
    "ProcessTable",
    "StepWorkspace",
    "finish_interrupted_run",
    "interrupted_fields",
    "interrupted_state",
    "new_run_prefix",
    "new_tag",
    "note_leftovers",
    "process_table",
    "run_prefix",
    "still_running",
    "stop_left_behind",
    "terminate",
    "undying_of",
    "use_process_table",
]

#: The environment variable every step process carries: ``<pid>-<random>.<n>``.
TAG_VARIABLE = "SHINOBI_TEARDOWN_TAG"

#: Seconds of repeated SIGKILL before a process is reported as undying.
KILL_WAIT = 5.0

_counter = itertools.count(1)
_token = secrets.token_hex(4)


#: :func:`run_prefix`, made once per process: every step asked for it (a
#: ``getpid`` system call and a format), and a forked child makes its own.
_prefix: str | None = None


def _forget_prefix() -> None:
    global _prefix
    _prefix = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_prefix)


def run_prefix() -> str:
    """The tag prefix shared by every step this process started.

    The random part keeps a recycled pid from claiming an older run's leftovers.
    """
    global _prefix
    if _prefix is None:
        _prefix = f"{os.getpid()}-{_token}."
    return _prefix


_runs = itertools.count(1)


def new_run_prefix() -> str:
    """The tag prefix of one run of this process (``PID-TOKEN.K.``): every step of
    it carries a tag that starts so, and no step of another run does.

    A script, a notebook or a task runner may run several recipes in one
    process, one after another or in threads at once: an interrupt of one
    run must sweep its own leftovers, not another run's steps (which then
    failed, "killed by SIGTERM") or the server an earlier run left on purpose.
    """
    return f"{run_prefix()}{next(_runs)}."


def new_tag(prefix: str | None = None) -> str:
    """A tag unique to one step process tree, under its run's ``prefix``
    (:func:`new_run_prefix`; this process's, :func:`run_prefix`, when none)."""
    return f"{prefix or run_prefix()}{next(_counter)}"


class ProcessTable:
    """How teardown sees and signals processes: /proc and ``kill(2)``."""

    def members(self, sid: int | None, tag: str | None, *, prefix: bool = False) -> list[int]:
        """Live (non-zombie) pids in session ``sid`` or carrying ``tag``, and
        every live descendant of those (a child that left the session and
        cleared its environment is still a child).

        With ``prefix``, any tag starting with ``tag`` matches (a whole run).
        """
        needle = None
        if tag is not None:
            needle = b"\0" + f"{TAG_VARIABLE}={tag}".encode()
            if not prefix:
                needle += b"\0"
        found: list[int] = []
        children: dict[int, list[int]] = {}
        for pid, rest in _live_processes():
            children.setdefault(int(rest[1]), []).append(pid)
            in_session = sid is not None and int(rest[3]) == sid
            if in_session or (needle is not None and _environ_has(str(pid), needle)):
                found.append(pid)
        return _with_descendants(found, children)

    def family(self, roots: Sequence[int]) -> list[int]:
        """The live ones of ``roots`` and every live descendant of those."""
        wanted = set(roots)
        found: list[int] = []
        children: dict[int, list[int]] = {}
        for pid, rest in _live_processes():
            children.setdefault(int(rest[1]), []).append(pid)
            if pid in wanted:
                found.append(pid)
        return _with_descendants(found, children)

    def send(self, pid: int, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _with_descendants(found: list[int], children: dict[int, list[int]]) -> list[int]:
    """``found`` followed by every descendant of its pids (``children``: by parent pid)."""
    seen = set(found)
    queue = list(found)
    while queue:
        for child in children.get(queue.pop(), ()):
            if child not in seen:
                seen.add(child)
                found.append(child)
                queue.append(child)
    return found


def _stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def _live_processes() -> Iterator[tuple[int, list[bytes]]]:
    """Every live (non-zombie) process but this one: its pid, and its stat fields
    after the command name (state, ppid, pgrp, session, ...)."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        rest = _stat_fields(entry)
        if rest is None or len(rest) < 4 or rest[0] in (b"Z", b"X"):
            continue
        yield int(entry), rest


def _start_time(pid: int) -> bytes | None:
    """When ``pid`` started (clock ticks after boot): tells a recycled pid apart."""
    rest = _stat_fields(pid)
    if rest is None or len(rest) < 20 or rest[0] in (b"Z", b"X"):
        return None
    return rest[19]


#: Processes that steps which had already ended left running: pid -> (start
#: time, the tag prefix of the run whose step left it).
_leftovers: dict[int, tuple[bytes, str]] = {}
_leftovers_lock = threading.Lock()


def note_leftovers(pids: Sequence[int], tag: str) -> None:
    """Remember processes the step tagged ``tag`` left running when its command exited.

    Those without the step's tag (a child that cleared its environment) are
    found by the step's session only while the step runs; after an interrupt
    :func:`finish_interrupted_run` stops these too, those of its own run only.
    The start time keeps a recycled pid from being taken for one of them.
    """
    if not pids:
        return
    run = tag.rpartition(".")[0] + "."
    with _leftovers_lock:
        for pid in [p for p, (started, _) in _leftovers.items() if _start_time(p) != started]:
            del _leftovers[pid]
        for pid in pids:
            started = _start_time(pid)
            if started is not None:
                _leftovers[pid] = (started, run)


def _live_leftovers(run: str) -> list[int]:
    """The leftovers of the run whose tags start with ``run`` that still live."""
    with _leftovers_lock:
        return [
            p for p, (started, of) in _leftovers.items() if of == run and _start_time(p) == started
        ]


def _environ_has(pid: str, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return needle in b"\0" + data + b"\0"


_table: ProcessTable = ProcessTable()


def process_table() -> ProcessTable:
    """The table teardown uses now (a test may have substituted one)."""
    return _table


@contextlib.contextmanager
def use_process_table(table: ProcessTable) -> Iterator[ProcessTable]:
    """Substitute ``table`` for the real one (tests: a process that will not die)."""
    global _table
    previous, _table = _table, table
    try:
        yield table
    finally:
        _table = previous


def _ask_to_stop(table: ProcessTable, pids: Sequence[int]) -> None:
    for pid in pids:
        table.send(pid, signal.SIGTERM)
        table.send(pid, signal.SIGCONT)  # a stopped process can only act on it once resumed


def _grace_period(
    find: Callable[[], Sequence[int]],
    timeout: float,
    table: ProcessTable,
    asked: set[int],
    hurry: threading.Event | None = None,
) -> list[int]:
    """Wait up to ``timeout`` for what ``find`` reports to go; what it reports
    that was not there before (``asked``) is sent its SIGTERM too, once.

    A shell that forks its tool just as the teardown first looks would
    otherwise leave the tool unasked, running out the whole grace period
    (ten seconds by default) before its SIGKILL, and the step with it.
    """
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        left = list(find())
        newcomers = [pid for pid in left if pid not in asked]
        if newcomers:
            asked.update(newcomers)
            _ask_to_stop(table, newcomers)
        if not left or time.monotonic() >= deadline or (hurry is not None and hurry.is_set()):
            return left
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def terminate(
    find: Callable[[], Sequence[int]],
    grace: float,
    kill_wait: float | None = None,
    table: ProcessTable | None = None,
    hurry: threading.Event | None = None,
) -> tuple[int, ...]:
    """SIGTERM what ``find`` reports (and, once each, what appears in it during
    the grace period), wait ``grace``, then SIGKILL until it is gone.

    Returns () once ``find`` reports nothing, or the pids still there after
    ``kill_wait`` (default :data:`KILL_WAIT`) seconds of SIGKILL (uninterruptible I/O).
    ``hurry``, once set (a second Ctrl-C), ends the grace period at once.
    """
    table = table or _table
    kill_wait = KILL_WAIT if kill_wait is None else kill_wait
    members = list(find())
    if not members:
        return ()
    _ask_to_stop(table, members)
    left = _grace_period(find, grace, table, set(members), hurry)
    deadline = time.monotonic() + kill_wait
    delay = 0.005
    while left:
        for pid in left:
            table.send(pid, signal.SIGKILL)
        if time.monotonic() >= deadline:
            break
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
        left = list(find())
    return tuple(sorted(left))


def stop_left_behind(
    sid: int,
    tag: str,
    left: Sequence[int],
    grace: float,
    hurry: threading.Event | None = None,
) -> tuple[int, ...]:
    """Stop what a step whose command has exited left running, as an interrupt
    would (:func:`terminate`); returns the pids that would not die.

    Found as while the step ran (session ``sid``, ``tag``), and among ``left``
    (what was seen running when the command exited) and their descendants: a
    child that left the session and cleared its environment is found by
    neither once the SIGTERM took its parent, and it may be the one that
    ignores SIGTERM. A pid of ``left`` now held by another process (its start
    time differs) is not taken for one of them.
    """
    table = _table
    seen = {pid: started for pid in left if (started := _start_time(pid)) is not None}

    def find() -> list[int]:
        found = set(table.members(sid, tag))
        same = [pid for pid, started in seen.items() if _start_time(pid) == started]
        if same:
            found.update(table.family(same))
        return list(found)

    return terminate(find, grace, table=table, hurry=hurry)


class StepWorkspace:
    """A step's temporary directory, removed only after its processes are gone.

    Backends that stage files for a step (a pystep's runner and its I/O, a
    container's sandbox) create one, run the step, then call :meth:`close`
    with the pids teardown could not kill: with any, the directory is left in
    place, because a live tool may still be writing into it.
    """

    def __init__(self, parent: str | None = None, prefix: str = "shinobi-step-") -> None:
        import tempfile  # with shutil, 3 ms of start-up a run of cabs alone never needs

        if parent is not None:
            os.makedirs(parent, exist_ok=True)
        self.path = tempfile.mkdtemp(prefix=prefix, dir=parent)
        self.kept = False

    def close(self, undying: Sequence[int] = ()) -> None:
        if undying:
            self.kept = True
            return
        remove_tree(self.path)


def remove_tree(path: str) -> None:
    """Delete a workspace (a seam tests watch to check it happens after teardown)."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _undying_of(steps: Sequence[StepResult]) -> set[int]:
    return {int(p) for step in every_step(steps) for p in step.details.get("undying", ())}


def undying_of(result: RecipeResult) -> tuple[int, ...]:
    """The pids the steps of ``result`` could not stop though no interrupt came
    (what a failed step left running, that would not die): the run's orphans
    once ninja exits, which the next run here must see (:mod:`shinobi.live_runs`)."""
    return tuple(sorted(_undying_of(result.steps)))


#: How an interrupted run ended when something of it may still run: a process
#: that would not die, a cluster job whose cancellation was never confirmed.
INTERRUPTED_LEAVING = "interrupted, not all stopped"


def still_running(result: RecipeResult) -> list[str]:
    """What the backends could not confirm stopped elsewhere (a Slurm job whose
    controller did not answer its scancel, a container the engine would not remove)."""
    return [
        str(s.details["still_running"])
        for s in every_step(result.steps)
        if s.details.get("still_running")
    ]


def interrupted_state(undying: Sequence[int], result: RecipeResult) -> str:
    """``interrupted``, or :data:`INTERRUPTED_LEAVING` when the teardown left something."""
    return INTERRUPTED_LEAVING if undying or still_running(result) else "interrupted"


def interrupted_fields(signum: int, undying: Sequence[int], result: RecipeResult) -> dict[str, Any]:
    """How an interrupted run is recorded, in its manifest and by ``run --json`` alike:
    its status, the signal, and no step to blame unless one had failed first."""
    failed = first_failed(result.steps)
    return {
        "status": interrupted_state(undying, result),
        "signal": signal.Signals(signum).name,
        "failed_step": failed.name if failed is not None else None,
    }


def finish_interrupted_run(session: Session, result: RecipeResult) -> tuple[int, ...]:
    """After an interrupt: sweep what the run left behind and name what will not die.

    Each step tears down its own processes; this catches the rest, such as a
    daemon a step that had already finished left running, by the tag every
    step of this run carries, and by what those steps were noted to have left
    (:func:`note_leftovers`), for a child that cleared its environment. Other
    runs of this process (a script's threads) are not touched. Returns every
    pid that survived.
    """
    table = _table
    prefix = session.control.tag_prefix
    survivors = set(session.undying) | _undying_of(result.steps)

    def find() -> list[int]:
        found = set(table.members(None, prefix, prefix=True))
        leftovers = _live_leftovers(prefix)
        if leftovers:
            found.update(table.family(leftovers))
        return [p for p in found if p not in survivors]

    left = terminate(
        find,
        session.control.grace,
        table=table,
        hurry=session.control.hurry,
    )
    survivors.update(left)
    return tuple(sorted(survivors))
