"""What a step-cache entry holds, and whether this ninja can use it.

An entry is written whole and renamed into place, yet a damaged disk, a hand
edit or another program can leave one that parses as JSON with fields of the
wrong type; :func:`read_entry` and :func:`unreplayable` tell such an entry
from a sound one, so that it reads as a miss (and ``ninja cache`` lists and
prunes it) instead of failing a step. Outputs that are absolute paths inside
the step's working directory are recorded relative to it
(:func:`anchored_outputs`) and made absolute again where the entry is reused
(:func:`reanchor`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

__all__ = [
    "FORMAT",
    "USED_CWD",
    "USED_HOST",
    "USE_GRAIN",
    "CacheEntry",
    "anchored_outputs",
    "mark_used",
    "parse_entry",
    "read_entry",
    "read_small",
    "reanchor",
    "relative_path",
    "unreplayable",
    "working_bases",
]

#: Bumped whenever the key recipe or the entry layout changes (2: scripts named
#: by an absolute path are keyed by content, outputs in the working directory
#: are recorded relative to it).
FORMAT = 2

#: The fields of an entry that say where it was last hit, when that was another
#: directory than the one it was made in (``cwd``, ``host``): a moved project's
#: entries are checked there. Absent until then; an older ninja of this format
#: ignores them.
USED_CWD = "used_cwd"
USED_HOST = "used_host"

#: How stale an entry file's modification time, its time of last use, may be
#: before a hit sets it to now (seconds). A hit that finds it newer leaves it:
#: a cached re-run soon after another writes no inode (on a shared file system
#: that is a round trip per step), and ``prune --older-than`` ages in days
#: cannot tell a minute.
USE_GRAIN = 60.0


def read_small(path: str) -> tuple[bytes, float]:
    """A small file's bytes, and its modification time, read through a bare descriptor.

    ``open()`` builds a buffered reader per file, which asks the kernel
    whether the file is a terminal and allocates a buffer first: a fully
    cached re-run reads one entry per step, and that came to a third of its
    lookup time in a fresh ``ninja`` process. The time is an entry's last use
    (see :func:`mark_used`): one ``fstat`` of the descriptor already open.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        status = os.fstat(fd)
        # one read when the size fstat gave is all there is (a byte more is asked
        # for, so a read that falls short shows the end without another call);
        # a larger read allocates that much first
        first = os.read(fd, min(status.st_size + 1, 65536))
        if len(first) <= status.st_size and status.st_size < 65536:
            return first, status.st_mtime
        chunks = [first]
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks), status.st_mtime
    finally:
        os.close(fd)


def mark_used(path: str, stamped: float, now: float) -> None:
    """Record that the entry at ``path``, whose modification time is ``stamped``,
    served a hit at ``now``: ``prune --older-than`` goes by last use, not by
    creation, so an entry a run hit yesterday is not "30 days old".

    The file's modification time is the record: no rewrite of the entry, one
    ``utime`` at most, and none while it is within :data:`USE_GRAIN` of now. A
    cache this user cannot write (shared, read-only) keeps the old time
    without a word: the hit is what the run needs.
    """
    if now - stamped < USE_GRAIN:
        return
    with contextlib.suppress(OSError):
        os.utime(path)


def parse_entry(raw: bytes) -> Any:
    """``json.loads(raw)`` for the bytes of an entry, with the same result and errors.

    ``json.loads`` of bytes first guesses their encoding in Python, once per
    step of a cached re-run. Bytes that start ``{"``, as every entry a store
    writes does, are guessed to be UTF-8 whatever follows (no byte order mark,
    no NUL), so those are decoded as such directly; anything else is left to
    ``json.loads`` to guess.
    """
    if raw[:2] == b'{"':
        return json.loads(raw.decode("utf-8", "surrogatepass"))
    return json.loads(raw)


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One stored result, as ``ninja cache ls`` shows it."""

    key: str
    path: Path
    step: str
    tool: str
    created: float
    run_id: str
    host: str
    cwd: str
    files: list[tuple[str, str]]
    size: int
    #: Each harvest glob (relative to ``cwd``) with the files it matched; None
    #: in an entry that can never hit (see ``problem``).
    globs: list[tuple[str, list[str]]] | None = None
    #: Why this ninja can never use the entry (damaged, or written by another
    #: version); None for a sound one. ``ninja cache`` shows such entries, and
    #: removes them, instead of tripping over them.
    problem: str | None = None
    #: Written by a newer ninja, which may share the cache: not this one's to prune.
    newer: bool = False
    #: When it was stored or last served a hit, whichever is later (see
    #: :func:`mark_used`): what ``prune --older-than`` goes by. 0.0: not known.
    used: float = 0.0
    #: The directory, and the host, of its last hit when that was not ``cwd``
    #: (a moved project); None if it has been used only where it was made.
    used_cwd: str | None = None
    used_host: str | None = None
    #: The file's modification time when it was read (0.0: not known): a store
    #: or a hit since changes it (see :meth:`shinobi.cache.StepCache.remove`).
    read_mtime: float = 0.0
    #: This user may not read it: another user's, in a cache a group shares (made
    #: under umask 077). Not this user's to judge, nor to prune.
    foreign: bool = False

    @property
    def place(self) -> str:
        """The directory its outputs are checked in: where it was last used."""
        return self.cwd if self.used_cwd is None else self.used_cwd

    @property
    def place_host(self) -> str:
        """The host that used it in :attr:`place`: the one that can see its outputs."""
        return self.host if self.used_host is None else self.used_host


def _within(path: str, bases: tuple[str, ...]) -> str | None:
    """``path`` relative to the first of ``bases`` it lies under, else None.

    Lexical: a path is "under" the working directory as spelt (or as
    resolved, when the tool printed the resolved form), whatever exists there.
    """
    for base in bases:
        rel = os.path.relpath(path, base)
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            return rel
    return None


def relative_path(path: str, bases: tuple[str, ...]) -> str:
    """``path`` relative to the working directory if it lies under it, else as given."""
    rel = _within(path, bases)
    return path if rel is None else rel


def working_bases(cwd: str) -> tuple[str, ...]:
    """The spellings of the working directory an absolute output path may start
    with: as given, resolved, and as the shell's ``$PWD`` spells it when that is
    the same directory through a link (``/scratch/me/w1`` for
    ``/lustre/scratch/me/w1``): a tool that prints ``$PWD/x.txt`` inherits the
    shell's spelling, which ``getcwd()`` never gives."""
    real = os.path.realpath(cwd)
    bases = [cwd] if real == cwd else [cwd, real]
    logical = os.path.normpath(os.environ.get("PWD") or ".")
    if os.path.isabs(logical) and logical not in bases and os.path.realpath(logical) == real:
        bases.append(logical)
    return tuple(bases)


def _anchor(value: Any, bases: tuple[str, ...]) -> str | None:
    """The relative form of ``value`` when it is an absolute path inside the
    working directory (as text or a path object), else None."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not os.path.isabs(value):
        return None
    return _within(value, bases)


def anchored_outputs(
    outputs: dict[str, Any], bases: tuple[str, ...]
) -> tuple[dict[str, Any], list[list[Any]]]:
    """``outputs`` as an entry records them, and where each re-anchored value is.

    An absolute path inside the working directory (a tool that prints
    ``$PWD/product.fits``, a wrangler that reads it) is recorded relative to
    it, as ``[field, None]`` or ``[field, index]`` into a list: a hit in
    another project directory must hand on that project's file, not this one's.
    A path outside it (a shared ``/scratch`` product) stays as it is.
    """
    stored = dict(outputs)
    anchors: list[list[Any]] = []
    for name, value in outputs.items():
        if isinstance(value, list | tuple):
            items = list(value)
            for index, item in enumerate(items):
                rel = _anchor(item, bases)
                if rel is not None:
                    items[index] = rel
                    anchors.append([name, index])
            stored[name] = items
        else:
            rel = _anchor(value, bases)
            if rel is not None:
                stored[name] = rel
                anchors.append([name, None])
    return stored, anchors


def _under(cwd: str, rel: str) -> str:
    """``rel`` (as :func:`_within` gave it) made absolute under ``cwd``."""
    return cwd if rel == os.curdir else os.path.join(cwd, rel)


def reanchor(outputs: dict[str, Any], anchors: list[list[Any]], cwd: str) -> None:
    """Make each anchored path of ``outputs`` (just parsed: changed in place)
    absolute under the working directory of the run that reuses them."""
    for name, index in anchors:
        if index is None:
            outputs[name] = _under(cwd, outputs[name])
        else:
            outputs[name][index] = _under(cwd, outputs[name][index])


# -- the shape of an entry ------------------------------------------------------
# An entry is written whole and renamed into place, yet a damaged disk, a hand
# edit or another program can leave one that parses as JSON with fields of the
# wrong type. Replaying it would fail the step with an internal error (or hand
# a step nonsense), so it must read as a miss. A fully cached re-run looks up
# one entry per step, so the lookup checks only the fields it hands on, with
# exact type tests (JSON yields exact types), and lets the lists it walks
# anyway fail as they are walked; ``ninja cache`` checks everything.


def _texts(value: Any) -> TypeGuard[list[str]]:
    """Whether ``value`` is a list of strings."""
    return type(value) is list and all(type(item) is str for item in value)


def _rows(value: Any) -> TypeGuard[list[list[Any]]]:
    """Whether ``value`` is a list of two-item lists whose first item is a string."""
    if type(value) is not list:
        return False
    for row in value:
        if type(row) is not list or len(row) != 2 or type(row[0]) is not str:
            return False
    return True


def _anchors_fit(anchors: Any, outputs: dict[str, Any]) -> bool:
    """Whether every anchor names a string among ``outputs`` (see :func:`anchored_outputs`)."""
    if not _rows(anchors):
        return False
    for name, index in anchors:
        target = outputs.get(name)
        if index is None:
            if type(target) is not str:
                return False
        elif not (
            type(index) is int
            and type(target) is list
            and 0 <= index < len(target)
            and type(target[index]) is str
        ):
            return False
    return True


def _is_time(value: Any) -> TypeGuard[float]:
    return type(value) in (int, float) and math.isfinite(value)


def unreplayable(data: dict[str, Any]) -> str | None:
    """Which field a hit hands on has a type a fresh result never has, or None."""
    if type(data.get("outputs")) is not dict:
        return "outputs is not an object"
    # a field that may be null is there all the same: "" (a wrong type) if not
    returncode = data.get("returncode", "")
    if returncode is not None and type(returncode) is not int:
        return "returncode is not a number"
    for name in ("stdout", "stderr", "run_id", "host"):
        if type(data.get(name)) is not str:
            return f"{name} is not text"
    warnings = data.get("warnings")
    if warnings != [] and not _texts(warnings):  # (most steps warn of nothing)
        return "warnings is not a list of text"
    argv = data.get("argv", "")
    if argv is not None and not _texts(argv):
        return "argv is not a list of text"
    if not _is_time(data.get("created")):
        return "created is not a time"
    until_changed = data.get("until_changed", "")
    if until_changed is not None and type(until_changed) is not bool:
        return "until_changed is not true or false"
    return None


def _malformed(data: dict[str, Any]) -> str | None:
    """What is wrong with the fields of the entry ``data`` (of this format), or None.

    Everything :meth:`StepCache.lookup` relies on (and the fields ``ninja
    cache`` shows), so that every entry a lookup would miss on for its shape
    is listed as unusable, and pruned.
    """
    files = data.get("files")
    if not _rows(files) or not all(type(digest) is str for _, digest in files):
        return "files is not a list of [path, digest]"
    globs = data.get("globs")
    if globs is None:
        return "it records no harvest globs"
    if not _rows(globs) or not all(_texts(matched) for _, matched in globs):
        return "globs is not a list of [pattern, matches]"
    for name in ("step", "cwd"):
        if type(data.get(name)) is not str:
            return f"{name} is not text"
    problem = unreplayable(data)
    if problem is None and not _anchors_fit(data.get("anchored"), data["outputs"]):
        return "anchored does not fit the outputs"
    return problem


def _text(value: Any, default: str) -> str:
    return value if isinstance(value, str) else default


def _unusable(
    path: Path,
    problem: str,
    size: int,
    mtime: float,
    data: dict[str, Any] | None = None,
    newer: bool = False,
) -> CacheEntry:
    """An entry this ninja cannot use, with what can be shown of it.

    It goes by its file name, the only key sure to find it again; its time
    is the file's (``mtime``) when the entry's own is unusable, so ``ls`` can sort it.
    """
    data = data or {}
    created = data.get("created")
    if not _is_time(created):
        created = mtime
    return CacheEntry(
        key=path.stem,
        path=path,
        step=_text(data.get("step"), "?"),
        tool=_text(data.get("tool"), "?"),
        created=float(created),
        run_id=_text(data.get("run_id"), ""),
        host=_text(data.get("host"), ""),
        cwd=_text(data.get("cwd"), ""),
        files=[],
        size=size,
        problem=problem,
        newer=newer,
        used=max(float(created), mtime),
        read_mtime=mtime,
    )


def read_entry(path: Path) -> CacheEntry:
    """The entry stored at ``path``, sound or not (see :attr:`CacheEntry.problem`)."""
    try:
        raw, mtime = read_small(str(path))
    except OSError as exc:
        entry = _unusable(path, f"cannot be read: {exc.strerror or exc}", 0, _mtime(path))
        if isinstance(exc, PermissionError):  # another user's, not a damaged one
            entry = dataclasses.replace(entry, foreign=True)
        return entry
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return _unusable(path, "damaged: not JSON", len(raw), mtime)
    if not isinstance(data, dict):
        return _unusable(path, "damaged: not a JSON object", len(raw), mtime)
    form = data.get("format")
    if form != FORMAT:
        newer = type(form) is int and form > FORMAT
        which = "a newer" if newer else "an older"
        return _unusable(path, f"written by {which} ninja", len(raw), mtime, data, newer)
    problem = _malformed(data)
    if problem is None and data.get("key") != path.stem:
        problem = "it is filed under another key"
    if problem is not None:
        return _unusable(path, f"damaged: {problem}", len(raw), mtime, data)
    used_cwd, used_host = _last_use(data)
    return CacheEntry(
        key=path.stem,
        path=path,
        step=data["step"],
        tool=_text(data.get("tool"), "?"),
        created=float(data["created"]),
        run_id=data["run_id"],
        host=data["host"],
        cwd=data["cwd"],
        files=[(rel, digest) for rel, digest in data["files"]],
        size=len(raw),
        globs=[(pattern, matched) for pattern, matched in data["globs"]],
        used_cwd=used_cwd,
        used_host=used_host,
        used=max(float(data["created"]), mtime),
        read_mtime=mtime,
    )


def _mtime(path: Path) -> float:
    """The modification time of ``path``; 0.0 (not known) when it cannot be had."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _last_use(data: dict[str, Any]) -> tuple[str | None, str | None]:
    """Where ``data`` records its last hit (see :data:`USED_CWD`) as (cwd, host).
    Both, or neither: a damaged pair reads as none, and the next hit elsewhere
    rewrites it."""
    cwd, host = data.get(USED_CWD), data.get(USED_HOST)
    if type(cwd) is not str or type(host) is not str:
        return None, None
    return cwd, host
