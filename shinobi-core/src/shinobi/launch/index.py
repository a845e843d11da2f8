"""The launches index: every detached launch this user made, wherever its workdir is.

One JSON line per launch in ``launches.jsonl`` under the user's state
directory (``platformdirs.user_state_dir("shinobi")``, i.e.
``$XDG_STATE_HOME/shinobi`` on Linux). It only points at handle files; the
state of a launch is never stored here but rebuilt from the engine, so the
index cannot go stale in any way that matters beyond a handle that was
deleted by hand (reported as such by ``ninja runs``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from shinobi.errors import MachineRefused
from shinobi.launch.handle import LaunchHandle, atomic_write

__all__ = ["IndexEntry", "forget_launches", "index_path", "list_launches", "record_launch"]


def index_path() -> Path:
    from shinobi.config import user_dir

    return user_dir("state", "set XDG_STATE_HOME to a directory of yours") / "launches.jsonl"


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """Where one launch's handle is, and enough to list it without reading it."""

    handle: str
    workdir: str
    recipe: str
    run_id: str
    engine: str
    created: float

    def in_workspace(self, workdir: str | Path) -> bool:
        return os.path.realpath(self.workdir) == os.path.realpath(workdir)


@contextlib.contextmanager
def _locked() -> Iterator[Path]:
    path = index_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield path
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def record_launch(handle: LaunchHandle) -> None:
    """Add ``handle`` (already written, so it has a path) to the index."""
    if handle.path is None:
        raise ValueError("write the handle before recording the launch")
    entry = {
        "handle": str(handle.path),
        "workdir": handle.workdir,
        "recipe": handle.recipe,
        "run_id": handle.run_id,
        "engine": handle.engine,
        "created": handle.created,
    }
    with _locked() as path, open(path, "ab+") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")  # a writer died mid-line: do not glue this entry to its remains
        fh.write(json.dumps(entry).encode() + b"\n")
        fh.flush()
        os.fsync(fh.fileno())


def _read(path: Path) -> list[IndexEntry]:
    entries: dict[str, IndexEntry] = {}
    try:
        # lines as bytes: one bad byte (a disk error, a hand edit) spoils its line
        # only, where decoding the whole file stopped every command that lists launches
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        return []
    except OSError as exc:  # HOME=/dev/null, a directory in its place...
        raise MachineRefused(
            f"cannot read the launches index {path} ({exc.strerror or exc}): set"
            " XDG_STATE_HOME to a directory of yours (or HOME to your home directory)"
        ) from None
    for line in lines:
        try:
            data = json.loads(line)  # a line that is not UTF-8 is a ValueError here
            entry = IndexEntry(
                handle=str(data["handle"]),
                workdir=str(data["workdir"]),
                recipe=str(data["recipe"]),
                run_id=str(data["run_id"]),
                engine=str(data["engine"]),
                created=float(data.get("created", 0.0)),
            )
        except (ValueError, KeyError, TypeError):
            continue  # a torn line from a crashed writer: skip it, keep the rest
        entries[entry.handle] = entry
    return sorted(entries.values(), key=lambda e: e.created)


def list_launches(workdir: str | Path | None = None) -> list[IndexEntry]:
    """Recorded launches, oldest first; only those of ``workdir`` when given."""
    entries = _read(index_path())
    if workdir is None:
        return entries
    return [e for e in entries if e.in_workspace(workdir)]


def forget_launches(handles: Iterable[str | Path]) -> int:
    """Drop the entries pointing at ``handles``; returns how many were dropped."""
    drop = {os.path.realpath(h) for h in handles}
    if not drop:
        return 0
    try:
        return _forget(drop)
    except OSError as exc:  # said as the index's, with its fix, not as a bare path
        raise MachineRefused(
            f"cannot update the launches index {index_path()} ({exc.strerror or exc}): set"
            " XDG_STATE_HOME to a directory of yours (or HOME to your home directory)"
        ) from None


def _forget(drop: set[str]) -> int:
    with _locked() as path:
        entries = _read(path)
        keep = [e for e in entries if os.path.realpath(e.handle) not in drop]
        if len(keep) == len(entries):
            return 0
        text = "".join(
            json.dumps(
                {
                    "handle": e.handle,
                    "workdir": e.workdir,
                    "recipe": e.recipe,
                    "run_id": e.run_id,
                    "engine": e.engine,
                    "created": e.created,
                }
            )
            + "\n"
            for e in keep
        )
        atomic_write(path, text)
        return len(entries) - len(keep)
