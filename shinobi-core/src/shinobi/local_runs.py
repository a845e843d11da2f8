"""The folders ``ninja run`` leaves under ``<workdir>/.shinobi/runs/``, one per run.

Each holds the run's step logs (and its manifest with ``--provenance``).
While a run goes on, ninja holds an advisory lock on ``.running`` in its
folder; the kernel drops it when ninja exits however it exits (SIGKILL
included), so "is this run still going" has an answer that cannot go stale,
and ``ninja clean --runs`` never deletes the logs of a run in progress.

When the run ends, ninja writes how it ended (``ok``, ``failed``,
``interrupted``, ...) into ``.running`` before it lets the lock go. A run
that holds no lock and never wrote its end was killed (SIGKILL, a crash of
the machine) or is older than this record: the steps it started may even
still be running, so it must not look like a run that finished.

A step log that could not be written whole (a full disk) is named in the
record too, under ``cut_logs`` (the log's path in the folder, and the error),
the moment the write fails: ``ninja logs`` then says the log was cut off
rather than showing what is left of it as all the step printed.

Some file systems take no locks at all (Lustre mounted without ``flock``, an
NFS mount without a lock daemon: ``flock`` fails with ENOSYS or ENOLCK). A
run there still writes its record, marked ``unlocked``, and is taken as
running until it writes its end, as long as its ninja (by pid, on the host
that wrote it) is alive; a run of another host cannot be checked, so it
counts as running until it says it ended. Better a folder kept too long
than the logs of a run in progress deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shinobi.host_name import this_host
from shinobi.step_names import scattered_step, unsliced
from shinobi.wording import listed

__all__ = [
    "ENDED_ABRUPTLY",
    "JOBS_LEDGER",
    "RUN_RECORD",
    "SLICE_NOTES",
    "STEP_LIST",
    "STEP_STATUSES",
    "LocalRun",
    "SliceNote",
    "age_days",
    "cut_logs",
    "describe_run",
    "find_local_run",
    "hold_run",
    "is_run_name",
    "is_running",
    "jobs_ledgers",
    "ledger_job_ids",
    "ledgers_in",
    "local_runs",
    "note_cut_log",
    "note_in_ledger",
    "note_statuses",
    "note_steps",
    "pid_alive",
    "recorded_steps",
    "release_run",
    "remove_run",
    "run_logs",
    "runs_root",
    "settled_status",
    "slice_note",
    "step_statuses",
]

#: The record every run folder keeps (its lock while it runs, then how it ended).
RUN_RECORD = ".running"
#: Every step a run has (nested ones as ``PARENT.STEP``), a JSON list written as it
#: starts: beside the record, which ``ninja runs`` reads for every run, not in it.
STEP_LIST = ".steps"
#: The steps of an ended run that did not end ``ok`` or ``cached``, with how they
#: ended (``failed``, ``cancelled``, ``skipped``, ``not run``): a JSON object
#: written as the run ends, so ``ninja logs`` can tell a step that never started
#: from one that printed nothing, without ``--provenance``.
STEP_STATUSES = ".statuses"
#: Each scattered step of an ended run: how many slices it had and, as ranges
#: ``[start, stop]``, those that never started (a failure stopped the run
#: first), so ``ninja logs`` can say a slice did not run, or that the step has
#: no such slice, without ``--provenance``. Ranges keep the note of a
#: 2,000-slice scatter a few numbers long, where a status a slice was 2,000.
SLICE_NOTES = ".slices"
#: What each lock this process holds says (recipe, pid), by descriptor, so
#: :func:`release_run` can add how the run ended to it.
_HELD: dict[int, dict[str, object]] = {}
#: The folder of each run this process holds, by the descriptor of its record.
_FOLDERS: dict[int, str] = {}
#: Step logs are written from reader threads: one note of a cut log at a time.
_HELD_LOCK = threading.Lock()
#: The state of a run that holds no lock and never recorded how it ended.
ENDED_ABRUPTLY = "ended abruptly (killed?)"

#: A backend whose steps run outside ninja (batch jobs) lists every job it
#: submitted in ``<run folder>/<backend>/jobs.tsv`` (``JOBID<TAB>STEP``) the moment
#: the engine accepts it: those jobs outlive a ninja killed outright, and
#: ``ninja clean --runs`` keeps their run's folder (see :func:`jobs_ledgers`).
JOBS_LEDGER = "jobs.tsv"


def runs_root(workdir: Path) -> Path:
    """Where the runs of ``workdir`` keep their folders."""
    return workdir / ".shinobi" / "runs"


def dangling_link(path: str | os.PathLike[str]) -> str | None:
    """What is wrong with ``path`` when it is a symbolic link to nowhere, else None."""
    if os.path.islink(path) and not os.path.exists(path):
        return (
            f"it is a symbolic link to {os.readlink(path)}, which does not exist: mount or"
            " create that, or remove the link"
        )
    return None


def refuse_unreachable_records(workdir: Path) -> None:
    """Refuse a workspace whose records sit behind a link to nowhere (run records
    moved to a disk that is not mounted today): listing them as none would hide
    every run and launch, and cleaning would find nothing to clean."""
    from shinobi.errors import MachineRefused

    for path in (workdir / ".shinobi", runs_root(workdir)):
        said = dangling_link(path)
        if said is not None:
            raise MachineRefused(f"{path}: {said}")


def hold_run(run_dir: Path, recipe: str, warn: Callable[[str], None] | None = None) -> int | None:
    """Mark ``run_dir`` as in progress until :func:`release_run` or this process ends.

    The lock file also says which recipe ran, for runs that keep no manifest.
    A run that cannot write it (a full disk) still runs, and ``warn`` says
    what is lost: ``ninja runs`` cannot say how it ended.
    """

    def unrecorded(exc: OSError) -> None:
        if warn is not None:
            warn(
                f"cannot write the run's record {run_dir / RUN_RECORD}"
                f" ({exc.strerror or exc}): `ninja runs` will not say how this run ended,"
                " nor `ninja logs` what its steps printed if their logs fail too"
            )

    try:
        fd = os.open(run_dir / RUN_RECORD, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        unrecorded(exc)
        return None  # a run that cannot mark itself still runs; clean then goes by age
    record: dict[str, object] = {
        "recipe": recipe,
        "pid": os.getpid(),
        "host": this_host(),  # whose pid: `ninja cancel` says how to stop it
        "started": time.time(),
    }
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # another ninja holds it: not this run's folder
        os.close(fd)
        return None
    except OSError:  # no locks on this file system: the record says who runs it
        record.update(unlocked=True)
    try:
        os.write(fd, json.dumps(record).encode())
    except OSError as exc:  # a full disk: an empty record would read "unknown" for ever
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(run_dir / RUN_RECORD)
        unrecorded(exc)
        return None
    _HELD[fd] = record
    _FOLDERS[fd] = os.path.abspath(run_dir)
    return fd


def _rewrite(fd: int, record: dict[str, object]) -> None:
    """Write ``record`` over the held record file: in place first, then cut to its
    length, so a full disk has the space the old record took (truncating first
    would hand it to whoever fills the disk)."""
    data = json.dumps(record).encode()
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))


def note_cut_log(log: str, error: str) -> None:
    """Record, in the record of the run this process holds that ``log`` belongs to,
    that writing ``log`` failed with ``error``: what the log holds is not all the
    step printed. Called only when a write fails; a log of no run held here (or a
    record that cannot be rewritten now) is left to the warning already given,
    and the run's end writes the note again."""
    path = os.path.abspath(log)
    with _HELD_LOCK:
        for fd, folder in _FOLDERS.items():
            record = _HELD.get(fd)
            if record is None or not path.startswith(folder + os.sep):
                continue
            cut = record.setdefault("cut_logs", {})
            if isinstance(cut, dict):
                cut[os.path.relpath(path, folder)] = error
            with contextlib.suppress(OSError):
                _rewrite(fd, record)
            return


def cut_logs(run: LocalRun, step: str | None = None) -> dict[Path, str]:
    """The logs of ``run`` (or of its ``step``) that its record says were cut off by a
    write error, and the error; none for a run that noted none (or an older ninja's).
    A log that could not even be created is among them, though it is no file."""
    from shinobi.session import safe_name

    record = _read_json(run.path / RUN_RECORD) or {}
    cut = record.get("cut_logs")
    if not isinstance(cut, dict):
        return {}
    wanted = None if step is None else safe_name(step)
    found = {run.path / str(name): str(error) for name, error in cut.items()}
    return {path: error for path, error in found.items() if _of_step(path.stem, wanted)}


def note_steps(
    run_dir: Path, names: Iterable[str], nested: Iterable[str] = (), inside: Iterable[str] = ()
) -> None:
    """Keep the names of a run's steps, so that ``ninja logs RUN STEP`` can tell a
    step that printed nothing from a name the run has no step of (without
    ``--provenance`` nothing else lists them), and which of them are nested
    recipes (``nested``) and steps within them (``inside``): ``ninja logs RUN x``
    shows the logs of ``x.inner`` for a recipe ``x``, never those of a step of
    the run's own named ``x.y``. A run that cannot write it still runs; its logs
    then cannot tell these apart."""
    record = {"steps": list(names), "nested": list(nested), "inside": list(inside)}
    with contextlib.suppress(OSError):
        (run_dir / STEP_LIST).write_text(json.dumps(record))


def _step_record(run: LocalRun) -> dict[str, list[str]] | None:
    """What :func:`note_steps` kept (a list of names alone, from an older ninja)."""
    with contextlib.suppress(OSError, ValueError):
        said = json.loads((run.path / STEP_LIST).read_text())
        if isinstance(said, list):
            said = {"steps": said}
        if isinstance(said, dict):
            record = {k: v for k, v in said.items() if k in ("steps", "nested", "inside")}
            if all(
                isinstance(v, list) and all(isinstance(n, str) for n in v) for v in record.values()
            ):
                return record
    return None


def note_statuses(
    run_dir: Path,
    names: Iterable[str],
    ended: dict[str, str],
    unfinished: set[str],
    planned: Mapping[str, int] | None = None,
) -> None:
    """Keep how the steps of a run that ended did, where that was not ``ok``.

    ``names`` are the run's steps (as :func:`note_steps` got them), ``ended``
    each finished step's (or slice's) status, ``unfinished`` those still
    running when the run stopped (a crash): they are not claimed "not run".
    Nothing is written when every step ended ``ok`` or ``cached``. ``planned``:
    the slices each scattered step had (see :data:`SLICE_NOTES`).
    """
    notes = {name: status for name, status in ended.items() if status not in _FINE}
    begun = _with_parents([*ended, *unfinished])
    for name in names:
        if name not in begun:
            notes[name] = "not run"
    if notes:
        with contextlib.suppress(OSError):
            (run_dir / STEP_STATUSES).write_text(json.dumps(notes))
    if planned:
        started = {*ended, *unfinished}
        slices = {
            step: {"count": count, "not run": _never_started(step, count, started)}
            for step, count in planned.items()
        }
        with contextlib.suppress(OSError):
            (run_dir / SLICE_NOTES).write_text(json.dumps(slices))


def _never_started(step: str, count: int, started: set[str]) -> list[list[int]]:
    """The slices of ``step`` (``count`` of them) not among ``started``, as ranges
    ``[first, last]``: slices start in order, so a failure leaves one or two."""
    ranges: list[list[int]] = []
    for index in range(count):
        if f"{step}[{index}]" in started:
            continue
        if ranges and ranges[-1][1] == index - 1:
            ranges[-1][1] = index
        else:
            ranges.append([index, index])
    return ranges


@dataclass(frozen=True)
class SliceNote:
    """What a run noted of one slice ``STEP[index]`` as it ended (see :data:`SLICE_NOTES`):
    how many slices ``STEP`` had, and whether this one started (one beyond them did not)."""

    index: int
    count: int
    started: bool


def slice_note(run: LocalRun, name: str) -> SliceNote | None:
    """What ``run`` noted of the slice ``name`` (``STEP[k]``); None when it noted
    nothing of that step (not scattered, or an older ninja's run)."""
    step = scattered_step(name)
    note = (_read_json(run.path / SLICE_NOTES) or {}).get(step) if step != name else None
    if not isinstance(note, dict):
        return None
    try:
        index = int(name[len(step) + 1 : -1])
        count = int(note["count"])
        missed = any(first <= index <= last for first, last in note["not run"])
    except (TypeError, ValueError, KeyError):  # a note torn, or not a slice's index
        return None
    return SliceNote(index, count, started=index < count and not missed)


def _with_parents(names: Iterable[str]) -> set[str]:
    """``names`` with what holds each: a slice ``S[k]``'s step ``S``, and a nested
    step ``R.S``'s recipe ``R`` (a recipe began when a step of it did); and a step
    of a scattered recipe's slice (``R[2].S``) as the step the graph lists (``R.S``)."""
    found: set[str] = set()
    for name in names:
        for each in (name, unsliced(name)):
            while each and each not in found:
                found.add(each)
                owner = scattered_step(each)
                each = owner if owner != each else each.rpartition(".")[0]
    return found


#: How a step may end without anything to say of it in :data:`STEP_STATUSES`.
_FINE = frozenset({"ok", "cached"})


def recorded_steps(run: LocalRun) -> list[str] | None:
    """The steps ``run`` noted as it started (:func:`note_steps`); None when it noted
    none (an older ninja's run, a disk that refused the note)."""
    record = _step_record(run)
    return None if record is None else record.get("steps")


def release_run(fd: int | None, status: str | None = None) -> None:
    """Record that the run ended, and how (``status``: ``ok``, ``failed``,
    ``interrupted``, ...), then let its lock go.

    The record is written while the lock is still held, so no reader sees a
    free lock without it; a run that never gets here (SIGKILL) leaves none,
    which is how ``ninja runs`` tells it ended abruptly. A run that cannot
    write the record (a full disk) still ends and releases its lock.
    """
    if fd is None:
        return
    with _HELD_LOCK:
        record = _HELD.pop(fd, None)
        _FOLDERS.pop(fd, None)
    try:
        if record is not None:
            with contextlib.suppress(OSError):
                _rewrite(fd, {**record, "ended": True, "status": status})
    finally:
        # a process forked from ninja (a pystep's child) shares the lock's open file:
        # closing ninja's copy would leave the run "running" for as long as it lives
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def is_running(run_dir: Path) -> bool:
    """Whether the ninja that ran ``run_dir`` still holds it (or, where the file
    system takes no locks, whether its record says it may still be going)."""
    try:
        fd = os.open(run_dir / RUN_RECORD, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # held; but a run that wrote its end is over, whoever holds it
        record = _read_json(run_dir / RUN_RECORD)
        return record is None or (record.get("ended") is not True and not _owner_gone(record))
    except OSError:  # no locks here: only the record can tell
        return _unlocked_run_goes_on(_read_json(run_dir / RUN_RECORD))
    finally:
        os.close(fd)
    return False


def _owner_gone(record: dict[str, object]) -> bool:
    """Whether the ninja that wrote ``record`` is known to be gone though its lock is
    held: a process forked from it (a pystep's ``multiprocessing`` child) shares
    the lock's open file and outlived a ``kill -9`` of it, and the run was
    listed as running, under a pid no process had any more. One of another
    host cannot be asked."""
    pid = record.get("pid")
    if record.get("host") != this_host() or type(pid) is not int or pid <= 0:
        return False
    return not pid_alive(pid)


def _unlocked_run_goes_on(record: dict[str, object] | None) -> bool:
    """Whether a run whose folder cannot be locked may still be going: it has not
    written its end, and its ninja is alive (one of another host cannot be asked)."""
    if record is None or record.get("ended") is True:
        return False
    if not record.get("unlocked"):  # written where locks worked, and never released
        return False
    return not _owner_gone(record)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host lives (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's
        return True
    return True


@dataclass(frozen=True, slots=True)
class LocalRun:
    """One run folder: its id, whether it is still going, how it ended.

    ``status`` is how the run said it ended (its manifest's final status, or
    the one it wrote into its lock file); ``ended`` whether it said so at
    all; ``recorded`` whether it left any record (a lock file or a manifest).
    """

    run_id: str
    path: Path
    running: bool
    modified: float
    recipe: str | None = None
    status: str | None = None
    ended: bool = False
    recorded: bool = True
    #: When it started, from its lock file (None for a run that left none).
    started: float | None = None
    #: The pid of its ninja while it runs, and that ninja's host (None: not
    #: running, or a record of an older ninja that named no host).
    pid: int | None = None
    host: str | None = None
    #: This user may not look inside it (another user's run, made under umask 077).
    unreadable: bool = False

    @property
    def stop_hint(self) -> str | None:
        """What stops the running run from a shell when Ctrl-C cannot reach it (a
        run in the background or under nohup ignores SIGINT): ```kill -TERM <pid>```,
        and where, when its ninja runs on another host."""
        if not self.running or self.pid is None:
            return None
        elsewhere = self.host is not None and self.host != this_host()
        return f"`kill -TERM {self.pid}`" + (f" on {self.host}" if elsewhere else "")

    @property
    def state(self) -> str:
        """``running``; how it ended (``ok``, ``failed``, ``cancelled``, ``interrupted``,
        ``crashed``); ``finished`` when it ended without saying how;
        :data:`ENDED_ABRUPTLY` when it holds no lock and never said it ended;
        ``unreadable`` when this user may not look inside it."""
        if self.unreadable:
            return "unreadable"
        if self.running:
            return "running"
        if self.ended:
            return self.status or "finished"
        return ENDED_ABRUPTLY if self.recorded else "unknown"

    def to_json(self) -> dict[str, object]:
        return {
            "run_id": _readable(self.run_id),
            # a path a script opens: in the form the workspace's is given, which
            # os.fsencode turns back into the bytes (a run id is only shown)
            "path": str(self.path),
            "state": self.state,
            "pid": self.pid,
            "recipe": self.recipe,
            "modified": self.modified,
        }


def _readable(name: str) -> str:
    """A run id that is not UTF-8 (no id ninja made) with its bytes escaped
    (``bad\\xffdir``), to be shown rather than used."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _read_json(path: Path) -> dict[str, object] | None:
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text())
        if isinstance(data, dict):
            return data
    return None


#: How a run ended that its lock and its manifest say alike (see :func:`_describe`).
_PLAIN_ENDS = ("ok", "failed")


def _describe(path: Path) -> LocalRun:
    """What ``path`` holds: the run's lock (with how it ended, once it has) and its
    manifest (with ``--provenance``), the manifest's word first.

    A run whose lock says it ended ok or failed wrote its manifest's end, with
    the same word, before that: the manifest, which may be megabytes for a run
    of thousands of slices, is then not read (``ninja runs`` of hundreds of
    such runs took seconds). How a crash or a stop ended is the manifest's
    word, as it may say more.
    """
    if not os.access(path, os.R_OK | os.X_OK):  # nothing inside can be read, or judged
        modified = 0.0
        with contextlib.suppress(OSError):
            modified = path.lstat().st_mtime
        return LocalRun(path.name, path, False, modified, recorded=False, unreadable=True)
    running = is_running(path)
    lock = _read_json(path / RUN_RECORD)
    said_end = lock is not None and lock.get("ended") is True and lock.get("status") in _PLAIN_ENDS
    manifest = None if said_end else _read_json(path / "manifest.json")
    recorded = manifest is not None or lock is not None
    recipe: object = None
    status: object = None
    if manifest is not None:
        about = manifest.get("recipe")
        recipe = about.get("name") if isinstance(about, dict) else None
        status = manifest.get("status")
    ended = isinstance(status, str) and status != "running"  # the manifest's last write
    if lock is not None:
        recipe = recipe if isinstance(recipe, str) else lock.get("recipe")
        if not ended and lock.get("ended") is True:
            ended, status = True, lock.get("status")
    # the folder's own time moves as files come and go; the run's record and manifest
    # are rewritten in place as it ends, which moves only their own
    watched = (path, path / "logs", path / RUN_RECORD, path / "manifest.json")
    try:
        modified = max(p.stat().st_mtime for p in watched if p.exists())
    except OSError:
        modified = 0.0
    if not ended:  # running, or killed: a tool still writing its log is activity (the
        # folder's own time stayed at the last step's start through a 10-hour step)
        modified = max(modified, _newest_log(path / "logs"))
    started = lock.get("started") if lock is not None else None
    pid = lock.get("pid") if lock is not None and running else None
    host = lock.get("host") if lock is not None else None
    return LocalRun(
        path.name,
        path,
        running,
        modified,
        recipe if isinstance(recipe, str) else None,
        status if isinstance(status, str) else None,
        ended,
        recorded,
        started if isinstance(started, float) else None,
        pid if type(pid) is int and pid > 0 else None,
        host if isinstance(host, str) else None,
    )


def _newest_log(logs: Path) -> float:
    """When a log in ``logs`` was last written (0 when none can be read).

    Appending to a file moves its own time, not its folder's: a run whose ninja
    was killed, whose tool still writes, looked idle since it started, and
    ``clean --runs`` took it for an old run it may remove.
    """
    newest = 0.0
    with contextlib.suppress(OSError), os.scandir(logs) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
    return newest


def describe_run(path: Path) -> LocalRun:
    """The run folder ``path``, wherever it lies: ``ninja report`` takes a folder or a
    manifest anywhere, and must tell its state as ``ninja runs`` does."""
    return _describe(path)


def local_runs(workdir: Path) -> list[LocalRun]:
    """Every run folder of ``workdir``, oldest first.

    By the start time a run's lock file records, so "the latest run of a
    recipe" is the latest even for a script that runs it twice within a
    second. A run id starts with its start time in the local time of the
    ninja that ran it: ids of runs made under another ``TZ``, or in the hour
    a clock goes back, are out of order, so an id counts only for a folder
    whose lock records no start.
    """
    root = runs_root(workdir)
    if not root.is_dir():
        refuse_unreachable_records(workdir)
        return []
    runs = [_describe(p) for p in root.iterdir() if p.is_dir()]
    return sorted(runs, key=lambda r: (_started(r), r.run_id))


def _started(run: LocalRun) -> float:
    """When ``run`` started: its lock's record, else the time its id begins with."""
    if run.started is not None:
        return run.started
    try:
        return time.mktime(time.strptime(run.run_id[:15], "%Y%m%d-%H%M%S"))
    except (ValueError, OverflowError):
        return 0.0


def is_run_name(name: str) -> bool:
    """Whether ``name`` can be a run's id or the start of one: not a path, and not ``.``
    or ``..``, which under the runs folder are that folder and its parent, not runs."""
    return bool(name) and name not in (".", "..") and "/" not in name and os.sep not in name


def find_local_run(workdir: Path, name: str, *, by_recipe: bool = False) -> LocalRun | None:
    """The run folder ``name`` means: its id, a unique start of one, or (with
    ``by_recipe``) the latest run of the recipe ``name``; None when it means none.

    Raises :class:`~shinobi.errors.UsageError` naming the runs an ambiguous
    start of an id matches.
    """
    root = runs_root(workdir)
    if not root.is_dir():
        refuse_unreachable_records(workdir)
        return None
    if not is_run_name(name):
        return None
    exact = root / name
    if exact.is_dir():
        return _describe(exact)
    matches = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(name))
    if len(matches) == 1:
        return _describe(matches[0])
    if len(matches) > 1:
        from shinobi.errors import UsageError

        shown = listed(matches, 5, lambda p: p.name)
        raise UsageError(f"{name!r} matches {len(matches)} runs ({shown}); give more of it")
    if not by_recipe:
        return None
    of_recipe = [r for r in local_runs(workdir) if r.recipe == name]
    return of_recipe[-1] if of_recipe else None


def run_logs(run: LocalRun, step: str | None) -> list[tuple[str, Path]]:
    """(title, path) of the logs a run kept, every step's or ``step``'s, stdout first.

    Steps come in the order they last wrote (about the order they ended, which
    reads as the pipeline ran), by name where that is the same. A step that
    printed nothing has no log file (they are made on the first byte), so a
    step can have none.
    """
    from shinobi.session import safe_name

    logs = run.path / "logs"
    if not logs.is_dir():
        return []
    named = _renamed_logs(logs)  # titles, not file stems
    named.update((safe_name(name), name) for name in step_statuses(run))
    wanted = None if step is None else safe_name(step)
    inside = _steps_inside(run, step)
    by_stem: dict[str, list[tuple[str, Path, float]]] = {}
    for path in logs.iterdir():
        stem, _, stream = path.name.rpartition(".")
        if stream not in ("out", "err"):
            continue
        if _of_step(stem, wanted, inside):
            try:
                written = path.stat().st_mtime
            except OSError:
                written = 0.0
            by_stem.setdefault(stem, []).append((stream, path, written))
    order = sorted(by_stem, key=lambda stem: (min(w for _, _, w in by_stem[stem]), stem))
    return [
        (f"{named.get(stem, stem)} {'stdout' if stream == 'out' else 'stderr'}", path)
        for stem in order
        for stream, path, _ in sorted(by_stem[stem], key=lambda item: item[0] != "out")
    ]


def _of_step(stem: str, wanted: str | None, inside: frozenset[str] | None = None) -> bool:
    """Whether the log file ``stem`` is of the step whose file name is ``wanted``
    (every log, for None): a scattered step's logs are its slices' (STEP[0], ...),
    and a nested recipe's or a loop's are its steps' (STEP.inner, STEP[0].inner):
    those in ``inside`` when the run said which (None: every ``STEP.`` name)."""
    if wanted is None or stem == wanted or stem.startswith(f"{wanted}["):
        return True
    if not stem.startswith(f"{wanted}."):
        return False
    return inside is None or _UNSLICED.sub("", stem) in inside


#: A slice index in a log's name, taken off to find the step it is a slice of.
_UNSLICED = re.compile(r"\[\d+\]")


def _steps_inside(run: LocalRun, step: str | None) -> frozenset[str] | None:
    """The file names of the steps inside ``step`` of ``run`` (a nested recipe's);
    None when every ``STEP.`` name counts: a loop (no step of its own, whose
    iterations are ``LOOP.1``...), or a run without the record (an older
    ninja's). A step of the run's own named ``x.y`` is none of ``x``'s."""
    from shinobi.session import safe_name

    record = _step_record(run)
    if step is None or record is None or "inside" not in record:
        return None
    if step not in record.get("steps", ()):
        return None  # a loop's name, or a slice's
    prefix = f"{step}."
    return frozenset(safe_name(n) for n in record["inside"] if n.startswith(prefix))


def _renamed_logs(logs: Path) -> dict[str, str]:
    """The step each renamed log file stem belongs to, as the run noted them
    (see ``Session.log_paths``); a torn or unreadable note names none."""
    from shinobi.session import LOG_NAMES

    named: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in (logs / LOG_NAMES).read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                note = json.loads(line)
                if isinstance(note, dict) and isinstance(note.get("file"), str):
                    named[note["file"]] = str(note.get("step"))
    return named


def step_statuses(run: LocalRun) -> dict[str, str]:
    """Each step's status as the run's manifest records it; without a manifest,
    those of the steps that did not end ``ok`` (:func:`note_statuses`). A run
    that ended abruptly last wrote its manifest while it went on: see
    :func:`settled_status`."""
    from shinobi.provenance import load_manifest

    try:
        steps = load_manifest(run.path / "manifest.json")["steps"]
    except (ValueError, KeyError, TypeError):
        noted = _read_json(run.path / STEP_STATUSES) or {}
        return {str(name): str(status) for name, status in noted.items()}
    records = steps if isinstance(steps, list) else []
    abrupt = not run.running and not run.ended
    return {
        str(record["name"]): settled_status(str(record.get("status")), abrupt)
        for record in records
        if isinstance(record, dict) and "name" in record
    }


def settled_status(status: str, abrupt: bool) -> str:
    """A step's recorded ``status`` once its run is over; ``abrupt``: the run ended
    without recording how (killed), so a step still ``pending`` never ran and one
    still ``running`` ended no one knows how (``unknown``)."""
    if not abrupt or status not in ("pending", "running"):
        return status
    return "not run" if status == "pending" else "unknown"


def remove_run(run: LocalRun) -> int:
    """Delete ``run``'s folder; returns its size in bytes.

    A run folder that is a symbolic link (records moved to a bigger disk)
    loses only the link: what it points to lies outside ``.shinobi`` and is
    not ninja's to delete. Raises OSError naming the first thing that could
    not be removed, once everything else has been.
    """
    if os.path.islink(run.path):
        os.unlink(run.path)
        return 0
    size = count = 0
    for base, _, files in os.walk(run.path):
        for name in files:
            count += 1
            with contextlib.suppress(OSError):
                size += os.lstat(os.path.join(base, name)).st_size
    import shutil  # only ``ninja clean`` removes runs: no start-up pays for it

    failed: list[tuple[str, BaseException]] = []
    shutil.rmtree(run.path, onerror=lambda _, path, info: failed.append((path, info[1])))
    if failed:
        path, exc = failed[0]
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        refused = OSError(f"cannot remove {path}: {reason}")
        # every file still there (a read-only disk): nothing of the run was lost
        left = sum(len(files) for _, _, files in os.walk(run.path))
        refused.untouched = left == count  # type: ignore[attr-defined]
        raise refused
    return size


def jobs_ledgers(run: LocalRun) -> list[Path]:
    """The run's non-empty ledgers of batch jobs (:data:`JOBS_LEDGER`), relative to its folder."""
    return ledgers_in(run.path)


def ledgers_in(run_dir: Path) -> list[Path]:
    """The non-empty ledgers of batch jobs in the run folder ``run_dir``, relative to
    it; the folder each is in is named after the backend that wrote it."""
    found = []
    for ledger in sorted(run_dir.glob(f"*/{JOBS_LEDGER}")):
        try:
            if ledger.stat().st_size:
                found.append(ledger.relative_to(run_dir))
        except OSError:
            continue
    return found


def note_in_ledger(
    ledger: Path, job: str, step: str, warn: Callable[[str], None], noun: str = "job"
) -> None:
    """Add ``job`` (of step ``step``) to a run's ledger (:data:`JOBS_LEDGER`, in a
    folder named after the backend) as soon as it exists, making the folder if
    need be.

    The step's result records its job only when the step ends; a ninja killed
    outright (SIGKILL, an out-of-memory login node, a closed laptop) never
    gets there, and its jobs go on running with nothing on disk naming them
    but this. A ledger that cannot be written is said, never fatal: the job
    runs either way.
    """
    try:
        ledger.parent.mkdir(parents=True, exist_ok=True)
        with open(ledger, "a", encoding="utf-8") as fh:
            fh.write(f"{job}\t{step}\n")
    except OSError as exc:
        warn(f"could not note {ledger.parent.name} {noun} {job} (step {step!r}) in {ledger}: {exc}")


def ledger_job_ids(ledger: Path) -> list[str]:
    """The job ids ``ledger`` lists (``JOBID<TAB>STEP`` lines), once each, in order;
    none when it cannot be read."""
    try:
        lines = ledger.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    ids = (line.partition("\t")[0].strip() for line in lines)
    return list(dict.fromkeys(job for job in ids if job))


def age_days(run: LocalRun) -> float:
    return (time.time() - run.modified) / 86400
