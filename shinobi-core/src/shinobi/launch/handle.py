"""The handle file: a detached launch's only local record.

``<workdir>/.shinobi/<recipe>/handle.json`` names the latest launch of a
recipe from that workdir; each launch also keeps its own copy in its run
folder (``<workdir>/.shinobi/<recipe>/<run-id>/handle.json``) so an older
launch stays reachable after a newer one replaces the first. Handles are
written atomically (temp file, fsync, rename): a crash mid-write leaves the
previous handle intact, never half a file that ``ninja status`` cannot read.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shinobi.errors import UsageError
from shinobi.host_name import this_host
from shinobi.launch.folders import ENDED_NAME, HANDLE_NAME, TAKEN, holds_launches
from shinobi.launch.submitter import LaunchCancelled, cancel_requested

__all__ = [
    "ENDED_NAME",
    "HANDLE_NAME",
    "HANDLE_VERSION",
    "JOURNAL_NAME",
    "DamagedHandle",
    "ForeignHandle",
    "JobJournal",
    "LaunchHandle",
    "LaunchJob",
    "atomic_write",
    "holds_launches",
    "launch_dir",
    "note_ended",
    "noted_end",
    "owner_of",
    "read_handle",
    "run_folder",
    "write_handle",
]

HANDLE_VERSION = 1
#: Jobs handed to the engine so far, one JSON line each, while a launch is submitting.
JOURNAL_NAME = "submitted.jsonl"

#: The entry-point group whose plugin can answer for a handle.
HandleGroup = Literal["shinobi.offload", "shinobi.launchers"]


def _safe(name: str) -> str:
    from shinobi.session import safe_name

    return safe_name(name)


def launch_dir(workdir: str | Path, recipe: str) -> Path:
    """``<workdir>/.shinobi/<recipe>``: where a recipe's launches live.

    A recipe called ``runs`` would otherwise put its launches among the local
    runs, where ``ninja clean --runs`` would remove them unguarded.
    """
    stem = _safe(recipe)
    return Path(workdir) / ".shinobi" / TAKEN.get(stem, stem)


def run_folder(workdir: str | Path, recipe: str, run_id: str) -> Path:
    """``<workdir>/.shinobi/<recipe>/<run-id>``: one launch's scripts, logs and handle."""
    return launch_dir(workdir, recipe) / _safe(run_id)


@dataclass(slots=True)
class LaunchJob:
    """One unit the engine runs for a step: a batch job, a job array, a remote process.

    ``tasks`` is the size of a job array (None for a single job); the log
    paths of an array contain ``%a`` where the task index goes.
    """

    step: str
    job_id: str | None = None
    script: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    tasks: int | None = None
    after: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"step": self.step, "job_id": self.job_id}
        for key in ("script", "stdout", "stderr", "tasks"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        if self.after:
            data["after"] = list(self.after)
        if self.details:
            data["details"] = dict(self.details)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LaunchJob:
        return cls(
            step=str(data["step"]),
            job_id=None if data.get("job_id") is None else str(data["job_id"]),
            script=data.get("script"),
            stdout=data.get("stdout"),
            stderr=data.get("stderr"),
            tasks=data.get("tasks"),
            after=list(data.get("after", [])),
            details=dict(data.get("details", {})),
        )


@dataclass(slots=True)
class LaunchHandle:
    """Everything needed to find a detached launch again, and nothing live.

    ``group`` and ``engine`` name the plugin that answers for it (the
    ``slurm`` offload target, the ``ssh`` launcher); ``state`` is
    ``submitting`` until every job has been handed over, so a handle left by
    a submitter killed half-way is recognisable as such.
    """

    engine: str
    recipe: str
    run_id: str
    workdir: str
    group: str = "shinobi.offload"
    target: str | None = None
    cwd: str | None = None
    created: float = field(default_factory=time.time)
    state: Literal["submitting", "submitted"] = "submitted"
    jobs: list[LaunchJob] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    #: the process that submits the launch, ``{"host": ..., "pid": ...}``: this one
    #: until a handle read from a file says another (see launch.submitter)
    submitted_by: dict[str, Any] | None = None

    @property
    def run_dir(self) -> Path:
        return run_folder(self.workdir, self.recipe, self.run_id)

    @property
    def name(self) -> str:
        return f"{self.recipe}/{self.run_id}"

    def job(self, step: str) -> LaunchJob | None:
        return next((j for j in self.jobs if j.step == step), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": HANDLE_VERSION,
            "group": self.group,
            "engine": self.engine,
            "recipe": self.recipe,
            "run_id": self.run_id,
            "target": self.target,
            "workdir": self.workdir,
            "cwd": self.cwd,
            "created": self.created,
            "state": self.state,
            "submitted_by": self.submitted_by or {"host": this_host(), "pid": os.getpid()},
            "jobs": [job.to_json() for job in self.jobs],
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], path: Path | None = None) -> LaunchHandle:
        version = data.get("version")
        if version != HANDLE_VERSION:
            raise ValueError(f"handle version {version!r} is not {HANDLE_VERSION}")
        return cls(
            engine=str(data["engine"]),
            recipe=str(data["recipe"]),
            run_id=str(data["run_id"]),
            workdir=str(data["workdir"]),
            group=str(data.get("group", "shinobi.offload")),
            target=data.get("target"),
            cwd=data.get("cwd"),
            created=float(data.get("created", 0.0)),
            state=data.get("state", "submitted"),
            jobs=[LaunchJob.from_json(j) for j in data.get("jobs", [])],
            extra=dict(data.get("extra", {})),
            path=path,
            submitted_by=data["submitted_by"]
            if isinstance(data.get("submitted_by"), dict)
            else None,
        )


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that readers see the old or the new file, whole.

    The file gets the mode the umask gives, as the launch's scripts and logs do:
    a temporary file is made 0600, and a handle kept so was "damaged" to every
    other member of a group sharing the workspace."""
    from shinobi.file_digests import make_dirs

    make_dirs(path.parent)  # group-writable where the workspace is (a shared one)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError) and exc.filename is None:  # a write says what, not where
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_handle(handle: LaunchHandle, *, latest: bool = True) -> Path:
    """Write the launch's own handle (and, with ``latest``, the recipe's); returns the former.

    A launch still submitting is written without ``latest`` until the engine
    accepted its first job (see :class:`JobJournal`), so a submission that
    fails before never replaces the handle of the recipe's last launch.
    """
    text = json.dumps(handle.to_json(), indent=2, sort_keys=False) + "\n"
    own = handle.run_dir / HANDLE_NAME
    atomic_write(own, text)
    if latest:
        atomic_write(launch_dir(handle.workdir, handle.recipe) / HANDLE_NAME, text)
    handle.path = own
    return own


def note_ended(handle: LaunchHandle, state: str) -> None:
    """Record that the launch ended (``state``: how), beside its own handle; a
    workspace that cannot be written (another user's) goes unrecorded."""
    folder = handle.run_dir
    if (folder / ENDED_NAME).exists() or not folder.is_dir():
        return
    with contextlib.suppress(OSError):
        (folder / ENDED_NAME).write_text(f"{state}\n", encoding="utf-8")


def noted_end(handle: LaunchHandle) -> str | None:
    """How the launch was seen to end (:func:`note_ended`), or None when it was not."""
    try:
        said = (handle.run_dir / ENDED_NAME).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return said if said in ("completed", "failed", "cancelled") else None


class JobJournal:
    """Records each job the moment the engine accepts it.

    Rewriting the handle after every one of a thousand submissions would be
    quadratic; appending a line is not. A submitter killed half-way leaves a
    ``submitting`` handle plus this journal, and :func:`read_handle` merges
    the two, so the jobs already handed over stay visible and cancellable.
    """

    def __init__(self, handle: LaunchHandle, stop: threading.Event | None = None) -> None:
        self._handle = handle
        #: whether the recipe's latest handle names this launch yet (from its first job)
        self._published = False
        self.path = handle.run_dir / JOURNAL_NAME
        from shinobi.file_digests import make_dirs

        make_dirs(self.path.parent)  # shared as its workspace is
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._stop = stop

    def record(self, job: LaunchJob) -> None:
        """Write ``job`` down; then, if a stop was asked for meanwhile, stop.

        A Ctrl-C that comes while the engine is accepting a job must not lose
        that job's id (the engine's client runs on, in a session of its own):
        the submitter defers it to here, where the job is on record.
        """
        self._fh.write(json.dumps({"step": job.step, "job_id": job.job_id}) + "\n")
        self._fh.flush()
        if not self._published:
            # from its first job on this is the launch the recipe's name finds, and a
            # submitter killed now would leave the latest handle naming the one before
            self._published = True
            write_handle(self._handle)
        if self._stop is not None and self._stop.is_set():
            raise KeyboardInterrupt
        if cancel_requested(self._handle):
            raise LaunchCancelled(
                f"launch {self._handle.name} was cancelled (`ninja cancel`) while it was being"
                " submitted"
            )

    def close(self) -> None:
        self._fh.close()


def _merge_journal(handle: LaunchHandle) -> None:
    try:
        lines = (handle.run_dir / JOURNAL_NAME).read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    ids: dict[str, str] = {}
    for line in lines:
        try:
            data = json.loads(line)
            ids[str(data["step"])] = str(data["job_id"])
        except (ValueError, KeyError, TypeError):
            continue  # the line being written when the submitter died
    for job in handle.jobs:
        if job.job_id is None and job.step in ids:
            job.job_id = ids[job.step]


def _umask() -> int:
    """This process's umask, read where that changes nothing (``os.umask`` sets it)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status", encoding="ascii") as fh:
            line = next(line for line in fh if line.startswith("Umask:"))
        return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class DamagedHandle(UsageError):
    """A handle file that is there but cannot be read as one: ``path`` and why."""

    def __init__(self, path: Path, detail: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.detail = detail


class ForeignHandle(DamagedHandle):
    """A handle this user may not read: another user's (a launch in a workspace a
    group shares), which no command of this user's is to remove."""


def read_handle(path: str | Path) -> LaunchHandle:
    """A handle from its file; a missing or damaged file is a one-line UsageError."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(
            f"no launch handle at {str(path)!r}; `ninja runs` lists this workspace's launches"
        ) from None
    except PermissionError as exc:
        owner = owner_of(path)
        raise ForeignHandle(
            path,
            f"{owner}'s, unreadable to this user",
            f"the launch handle {str(path)!r} is {owner}'s, and this user may not read it"
            f" ({exc.strerror}): ask {owner} to follow or cancel it (or to make it readable,"
            " chmod g+r)",
        ) from None
    except (OSError, ValueError) as exc:
        raise DamagedHandle(
            path,
            str(exc),
            f"cannot read the launch handle {str(path)!r} ({exc}); it is damaged or not a"
            " handle file (`ninja clean --launches --force` removes a damaged one)",
        ) from None
    try:
        if not isinstance(data, dict):
            raise TypeError(f"a {type(data).__name__}, not an object")
        handle = LaunchHandle.from_json(data, path)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise DamagedHandle(
            path,
            str(exc),
            f"{str(path)!r} is not a shinobi launch handle ({exc}); name a handle.json that"
            " `ninja compile --submit` wrote",
        ) from None
    _follow_a_move(handle, path)
    if handle.state == "submitting":
        _merge_journal(handle)
    return handle


def _follow_a_move(handle: LaunchHandle, path: Path) -> None:
    """Root the handle's paths at the launch folder it was found in.

    The handle records absolute paths (its workdir, each job's script, logs,
    exit and skip files) as they were at submit time. A workspace moved, or
    copied (``cp -a proj proj-copy``), keeps those paths; read as recorded they
    would name the original's files, so the copy's ``clean --launches`` would
    delete the original's launch and its ``status`` read another exit file.
    The folder the handle sits in is the launch's own, wherever it is now.
    """
    here = _found_in(handle, path)
    recorded = handle.run_dir
    if here is None or str(here) == str(recorded):
        return
    if os.path.realpath(here) == os.path.realpath(recorded):
        return
    old, new = f"{recorded}{os.sep}", f"{here}{os.sep}"

    def moved(value: object) -> object:
        if isinstance(value, str) and value.startswith(old):
            return new + value[len(old) :]
        return value

    for job in handle.jobs:
        for attribute in ("script", "stdout", "stderr"):
            setattr(job, attribute, moved(getattr(job, attribute)))
        # the engine's own files of the run folder (an exit code above 127, a skip
        # marker); a path elsewhere, such as a loop's until file, is the user's
        job.details = {key: moved(value) for key, value in job.details.items()}
    handle.workdir = str(here.parent.parent.parent)


def _found_in(handle: LaunchHandle, path: Path) -> Path | None:
    """The run folder of the handle at ``path``: its own folder, or beside the
    recipe's latest-handle copy; None when there is no such folder."""
    here = path.resolve().parent
    if here.name != _safe(handle.run_id):  # the recipe's latest-handle copy
        here = here / _safe(handle.run_id)
    return here if here.is_dir() else None


def owner_of(path: Path, unknown: str = "another user") -> str:
    """The name of the user who owns ``path`` (its uid when it has none), or
    ``unknown`` when it cannot be told."""
    import pwd

    try:
        uid = path.stat().st_uid
    except OSError:
        return unknown
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
