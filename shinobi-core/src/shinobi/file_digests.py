"""Content digests of files and directories, memoised by their stat signature.

The step cache keys a step by the content of what it reads, and a fully
cached re-run must not read every input again. So a file's digest is
remembered by path, device, inode, size, mtime and ctime, in memory and in
per-host shards under the cache directory, and reused while that signature
holds. A digest taken within :data:`RACY_SECONDS` of the file's last change
(its mtime or its ctime, whichever is later) is not persisted: a second write
in the same timestamp tick would be invisible to the memo.

What cannot be read is never an error here: it has a digest of its own,
``unreadable:ERRNO``, that equals no content digest (see :func:`unreadable_digest`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import json
import os
import stat
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_MEMO_SHARD",
    "MEMO_FORMAT",
    "RACY_SECONDS",
    "TEMP_PREFIX",
    "DigestMemo",
    "DigestStopped",
    "Stopping",
    "hash_file",
    "is_compiled",
    "large_read_notice",
    "make_dirs",
    "unreadable_digest",
    "write_atomically",
]

#: Bumped whenever the layout of a memo shard changes; kept apart from the
#: cache's entry format so that a new entry layout does not make every input be
#: read again.
MEMO_FORMAT = 1
#: A digest of a file changed less than this long ago is kept for this run only.
RACY_SECONDS = 2.0
#: Memo entries kept per shard (4,096 shards per host); paths gone are dropped
#: first, then those learnt longest ago.
MAX_MEMO_SHARD = 5_000
#: The shards one directory's files are spread over, by their names: a
#: Measurement Set or a wsclean output directory of tens of thousands of files
#: fits (16 x MAX_MEMO_SHARD), where one shard a directory overflowed, and each
#: run read the overflow again.
_SPREAD = "0123456789abcdef"
#: Bytes a digest, or a batch of them, reads before it says so (see
#: ``DigestMemo.on_large``).
LARGE_READ = 1 << 30

_CHUNK = 1024 * 1024
#: How a compiled program starts: one named by an absolute path is known by name.
_ELF = b"\x7fELF"
#: Why a link points nowhere (no target, a cycle of links, a file taken for a
#: directory): recorded by its target, which is all there is to it.
_NOWHERE = frozenset({errno.ENOENT, errno.ELOOP, errno.ENOTDIR})


#: Asked between chunks of a file being hashed: True once the run is stopping.
Stopping = Callable[[], bool]


class DigestStopped(Exception):
    """Hashing was given up because the run is stopping.

    A 13 GB Measurement Set can take a minute to hash from a network file
    system; a Ctrl-C must not wait for it. Nothing about the file is remembered.
    """


#: How the temporary files of :func:`write_atomically` start (``.~PID.N``).
TEMP_PREFIX = ".~"
_temp_names = itertools.count()


def write_atomically(path: Path, data: bytes, *, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` via a temporary name and a rename.

    Readers see the old file or the new one, never a torn one, which is all
    a cache shared between hosts needs. ``fsync`` also survives a crash. A
    write that fails (a full disk) leaves no temporary file behind.
    """
    # As short as can be unique (pid and a count, in hex): a longer name than
    # the file's own failed where the path is near the system's limits (a
    # manifest in a folder 4,000 characters deep) although the file fits.
    tmp = path.with_name(f"{TEMP_PREFIX}{os.getpid():x}.{next(_temp_names):x}")
    try:
        # a bare descriptor: a buffered file asks whether it is a terminal and
        # allocates a buffer first, and a run stores an entry for every step
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:  # os.write says what, not where
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise


def make_dirs(path: Path) -> None:
    """``mkdir -p path``; a directory made in a group-writable one is made
    group-writable too, as git's ``core.sharedRepository`` does.

    A cache shared by a group is a group-owned setgid directory: the first
    user's umask (022) made ``entries/`` and ``memo/<host>/`` in it theirs
    alone, and the rest of the group could store nothing. The umask strips
    group write from what mkdir asks for, so it is added after; the setgid
    bit the parent passed on is kept. Files need none: each is replaced by a
    rename, which the directory's write permission allows.
    """
    if path.is_dir():
        return
    if not path.parent.is_dir():
        if os.path.lexists(path.parent):  # a file, or a link to nothing, in the way:
            # said of what stands there, as mkdir -p would not ("File exists")
            code = errno.EEXIST if os.path.islink(path.parent) else errno.ENOTDIR
            raise OSError(code, os.strerror(code), str(path.parent))
        make_dirs(path.parent)
    try:
        os.mkdir(path)
    except FileExistsError:
        if path.is_dir():  # another writer made it meanwhile
            return
        raise
    _share_as_parent(path)


def _share_as_parent(made: Path) -> None:
    """Give the group read, write and search of the directory ``made`` just now,
    when the group may write where it was made. A refusal (a file system that
    keeps no modes) leaves it as made: it is only shared less."""
    with contextlib.suppress(OSError):
        if os.stat(made.parent).st_mode & stat.S_IWGRP:
            mode = stat.S_IMODE(os.stat(made).st_mode)
            if (mode & stat.S_IRWXG) != stat.S_IRWXG:
                os.chmod(made, mode | stat.S_IRWXG)


def hash_file(path: str, stopping: Stopping | None = None) -> str:
    """The SHA-256 of ``path``'s bytes; raises OSError (callers decide what that means),
    or :class:`DigestStopped` once ``stopping()`` is true between two chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            if stopping is not None and stopping():
                raise DigestStopped(path)
    return digest.hexdigest()


def unreadable_digest(exc: OSError | ValueError) -> str:
    """The digest of something that cannot be read.

    It never equals a content digest, so it can never make a hit, and
    :meth:`StepCache.key` refuses to cache a step whose input reads so.
    """
    return f"unreadable:{getattr(exc, 'errno', None) or errno.EINVAL}"


def is_compiled(path: str) -> bool:
    """Whether ``path`` is a compiled (ELF) program; raises OSError if unreadable.

    Four bytes through a bare descriptor: this is asked once per program per
    run, so a cached re-run pays it once, not once per step.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, len(_ELF)) == _ELF
    finally:
        os.close(fd)


def large_read_notice(path: str) -> str:
    """What to say once reading for digests has passed :data:`LARGE_READ` while
    ``path`` is read: the bytes counted then are no measure of the whole (a
    10 GB directory said "1.1 GB"), only that it is large."""
    from shinobi.resources import format_size

    what = "the directory " if os.path.isdir(path) else ""
    return (
        f"reading {what}{path} for the step cache, with {format_size(LARGE_READ)} or more"
        " to read: what is large takes a while to read the first time, and is remembered after"
    )


@dataclass(slots=True)
class Reading:
    """What one digest, or one batch of them (see :meth:`DigestMemo.batch`), has had
    to read: the path being digested, the bytes so far, and whether that passed
    :data:`LARGE_READ`."""

    path: str = ""
    read: int = 0
    large: bool = False


class _Calls(threading.local):
    """Each thread's digest under way, and the batch it counts in, if any."""

    now: Reading | None = None
    batch: Reading | None = None


class _Batch:
    """The context :meth:`DigestMemo.batch` returns; a class, not a generator: a
    cached re-run enters two for every step."""

    __slots__ = ("_memo", "_outer")

    def __init__(self, memo: DigestMemo) -> None:
        self._memo = memo
        self._outer = False

    def __enter__(self) -> Reading:
        call = self._memo._call
        self._outer = call.batch is not None
        if call.batch is None:
            call.batch = Reading()
        return call.batch

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self._outer:
            return
        call = self._memo._call
        reading, call.batch = call.batch, None
        # not on the way out of an error: a run stopping saves when it ends
        after = self._memo.after_large
        if reading is not None and reading.large and kind is None and after is not None:
            after()


#: The hash of each directory seen, which starts the names of its files' shards.
_SHARDS: dict[str, str] = {}


class DigestMemo:
    """Content digests of files and directories, memoised by their stat signature.

    The persistent memo is a directory of shards, named by a hash of a file's
    parent directory and one of its name (one directory's files spread over a
    few), so a run loads (and rewrites) only the shards of the directories it
    touches however large the memo grows.

    An older memo had one shard per directory hash (``xx.json``): a shard not
    written yet takes its files from that one, and :meth:`prune` moves what is
    left of it into the new shards.
    """

    def __init__(self, root: Path | None) -> None:
        self.root = root
        #: Told once a digest, or a batch, has had :data:`LARGE_READ` bytes to read (the path
        #: asked about, the bytes so far): hashing many gigabytes takes minutes,
        #: and a run that says nothing meanwhile looks hung.
        self.on_large: Callable[[str, int], None] | None = None
        #: Told when a batch (see :meth:`batch`) whose reads passed
        #: :data:`LARGE_READ` ends: what took that long to learn is worth
        #: saving at once.
        self.after_large: Callable[[], None] | None = None
        self._call = _Calls()
        self._lock = threading.Lock()  # the dicts below: held briefly, never over a write
        self._saving = threading.Lock()  # one save at a time
        self._shards: dict[str, dict[str, list[Any]]] = {}
        self._fresh: dict[str, dict[str, list[Any]]] = {}
        self._racy: dict[str, list[Any]] = {}
        #: The older memo's shards read (see the class docstring), by name.
        self._older: dict[str, dict[str, list[Any]]] = {}

    @staticmethod
    def _shard_of(path: str) -> str:
        head, _, name = path.rpartition("/")  # as os.path.split, at a third of its cost
        directory = head if head or not path.startswith("/") else "/"
        prefix = _SHARDS.get(directory)
        if prefix is None:  # fsencode: a name that is not UTF-8 (lat\xe9in) hashes too
            digest = hashlib.sha1(os.fsencode(directory), usedforsecurity=False)
            prefix = _SHARDS[directory] = digest.hexdigest()[:2]
        return prefix + _SPREAD[zlib.crc32(os.fsencode(name)) % len(_SPREAD)]

    def _shard_path(self, shard: str) -> Path:
        assert self.root is not None
        return self.root / f"{shard}.json"

    def _load(self, shard: str) -> dict[str, list[Any]]:
        if self.root is None:
            return {}
        try:
            data = json.loads(self._shard_path(shard).read_bytes())
        except FileNotFoundError:
            return self._from_older(shard)
        except (OSError, ValueError):
            return {}
        return _entries_of(data)

    def _from_older(self, shard: str) -> dict[str, list[Any]]:
        """The entries of ``shard`` kept in the older memo's shard of its directory:
        without them, the first run of this version read every input again."""
        older = self._older.get(shard[:2])
        if older is None:
            try:
                data = json.loads(self._shard_path(shard[:2]).read_bytes())
            except (OSError, ValueError):
                data = None
            older = self._older[shard[:2]] = _entries_of(data)
        return {path: known for path, known in older.items() if self._shard_of(path) == shard}

    def _known(self, key: str) -> list[Any] | None:
        shard = self._shard_of(key)
        loaded = self._shards.get(shard)
        if loaded is None:
            loaded = self._shards[shard] = self._load(shard)
        return self._racy.get(key) or self._fresh.get(shard, {}).get(key) or loaded.get(key)

    def file(self, path: str, st: os.stat_result, stopping: Stopping | None = None) -> str:
        """``file:HEX`` for the regular file ``path`` whose stat is ``st``.

        ``unreadable:ERRNO`` when it cannot be read (no permission, gone
        meanwhile): a file whose content is unknown must neither fail the
        step nor ever match a recorded digest.
        """
        self._begin(path)
        return self._file(path, _memo_key(path), st, stopping)

    def _file(self, path: str, key: str, st: os.stat_result, stopping: Stopping | None) -> str:
        """:meth:`file`, remembered under ``key`` (see :func:`_memo_key`)."""
        signature = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        with self._lock:
            known = self._known(key)
        # a memo shard is a file anyone could have damaged: trust only its shape
        if (
            isinstance(known, list)
            and len(known) == 6
            and known[:5] == signature
            and isinstance(known[5], str)
        ):
            return "file:" + known[5]
        self._reading(st.st_size)
        try:
            digest = hash_file(path, stopping)
            after = os.stat(path)
        except OSError as exc:
            return unreadable_digest(exc)
        if [after.st_dev, after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns] != (
            signature
        ):
            return "file:" + digest  # changed while being read: use it, remember nothing
        record = [*signature, digest]
        # The last change is the later of mtime and ctime: ``cp -p``, ``rsync -t``
        # and ``tar x`` set an old mtime on a file written just now.
        racy = time.time() - max(st.st_mtime_ns, st.st_ctime_ns) / 1e9 < RACY_SECONDS
        with self._lock:
            if racy:
                self._racy[key] = record
            else:
                self._racy.pop(key, None)
                self._fresh.setdefault(self._shard_of(key), {})[key] = record
        return "file:" + digest

    def digest(
        self, path: str, stopping: Stopping | None = None, leave_out: Sequence[str] = ()
    ) -> str:
        """``file:HEX``, ``dir:HEX``, ``missing``, ``special:MODE`` or
        ``unreadable:ERRNO`` for ``path`` (links followed); raises only
        :class:`DigestStopped`, when ``stopping`` is given and says so.
        ``leave_out``: normalised paths inside a directory that its digest
        does not count (what the step that reads it writes there itself)."""
        self._begin(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return "missing"
        except (OSError, ValueError) as exc:  # ValueError: a NUL in a damaged entry's path
            return unreadable_digest(exc)
        if stat.S_ISDIR(st.st_mode):
            return self._tree(path, _memo_key(path), st, stopping, frozenset(leave_out))
        if stat.S_ISREG(st.st_mode):
            return self._file(path, _memo_key(path), st, stopping)
        return f"special:{stat.S_IFMT(st.st_mode)}"

    def batch(self) -> _Batch:
        """A context in which the reads of every digest count as one, on this
        thread: a step's twenty 900 MB inputs are 18 GB to read, which no single
        digest said. Inside another batch, that one counts."""
        return _Batch(self)

    def _begin(self, path: str) -> None:
        """Start digesting ``path``: counted on its own, or in this thread's batch."""
        call = self._call
        reading = call.batch if call.batch is not None else Reading()
        reading.path = path
        call.now = reading

    def _reading(self, size: int) -> None:
        """Count ``size`` bytes about to be read for the digest under way; say so
        once, before reading on, when that digest (or its batch) passes
        :data:`LARGE_READ`."""
        reading = self._call.now
        if reading is None:
            return
        reading.read += size
        if reading.read >= LARGE_READ and not reading.large:
            reading.large = True
            if self.on_large is not None:
                self.on_large(reading.path, reading.read)

    def _tree(
        self,
        root: str,
        key: str,
        top: os.stat_result,
        stopping: Stopping | None,
        leave_out: frozenset[str] = frozenset(),
    ) -> str:
        """``dir:HEX``, a digest of every name and file content under ``root``,
        whose files are remembered under ``key`` joined with their names.

        Links are followed: the tool reads what a link points to, so a
        sub-table linked in from elsewhere counts by its content. A link to a
        directory already being walked (a loop) is recorded by its target and
        not entered, as is a link that points nowhere.

        Anything inside that cannot be read makes the whole directory
        ``unreadable:ERRNO``: recorded by name only, its content could change
        unseen under a digest that still matched.
        """
        lines: list[str] = []
        stack: list[tuple[str, str, str, frozenset[tuple[int, int]]]] = [
            ("", root, key.rstrip("/") + "/", frozenset({(top.st_dev, top.st_ino)}))
        ]
        while stack:
            rel, base, keys, walking = stack.pop()
            try:
                entries = sorted(os.scandir(base), key=lambda e: e.name)
            except OSError as exc:
                return unreadable_digest(exc)
            for entry in entries:
                if leave_out and os.path.normpath(entry.path) in leave_out:
                    continue
                name = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    st = entry.stat()  # through a link
                except OSError as exc:
                    if exc.errno in _NOWHERE and _is_link(entry):  # as it stays until relinked
                        lines.append(f"{name}\0dangling:{_link_target(entry.path)}")
                        continue
                    return unreadable_digest(exc)  # vanished meanwhile, or no permission
                if stat.S_ISDIR(st.st_mode):
                    identity = (st.st_dev, st.st_ino)
                    if identity in walking:
                        lines.append(f"{name}\0loop:{_link_target(entry.path)}")
                        continue
                    lines.append(f"{name}\0dir")
                    stack.append((name, entry.path, f"{keys}{entry.name}/", walking | {identity}))
                elif stat.S_ISREG(st.st_mode):
                    content = self._file(entry.path, keys + entry.name, st, stopping)
                    if content.startswith("unreadable"):
                        return content
                    lines.append(f"{name}\0{content}")
                else:
                    lines.append(f"{name}\0special")
        lines.sort()  # the names' own bytes: a strict encode() refuses one not UTF-8
        return "dir:" + hashlib.sha256(os.fsencode("\n".join(lines))).hexdigest()

    def save(self) -> None:
        """Merge what this run learnt into the memo (last writer wins per path).

        Every shard is tried: one the disk refuses (full, another user's
        directory) costs only its own digests. The first refusal is raised
        once all were tried, and what was refused stays to be saved again.

        Safe while other threads take digests (a run saves after each large
        read, see ``StepCache``): what is saved is taken under the lock and
        written outside it, and stays known meanwhile; one save at a time, as
        two merging into one shard would each drop what the other wrote.
        """
        if self.root is None:
            return
        with self._saving:
            fresh = self._take_fresh()
            if not fresh:
                return
            try:
                make_dirs(self.root)
            except OSError:
                self._put_back(fresh)
                raise
            failure: OSError | None = None
            for shard, entries in fresh.items():
                try:
                    merged = self._merge(shard, entries)
                except OSError as exc:
                    failure = failure or exc
                    self._put_back({shard: entries})
                    continue
                with self._lock:
                    self._shards[shard] = merged
            if failure is not None:
                raise failure

    def _take_fresh(self) -> dict[str, dict[str, list[Any]]]:
        """What was learnt since the last save, to be saved now; it stays known
        (in the shards as loaded) while it is written."""
        with self._lock:
            fresh, self._fresh = self._fresh, {}
            for shard, entries in fresh.items():
                self._shards.setdefault(shard, {}).update(entries)
        return fresh

    def _put_back(self, refused: dict[str, dict[str, list[Any]]]) -> None:
        """Keep what could not be saved for the next save; what was learnt of a
        path since is newer, and wins."""
        with self._lock:
            for shard, entries in refused.items():
                learnt = self._fresh.setdefault(shard, {})
                for path, known in entries.items():
                    learnt.setdefault(path, known)

    def _merge(self, shard: str, fresh: dict[str, list[Any]]) -> dict[str, list[Any]]:
        """Write ``fresh`` into ``shard`` as it is on disk now; returns what it holds."""
        # learnt last, so kept last (update() leaves a path known before where it
        # was): a shard too full forgets what was learnt longest ago
        on_disk = {p: v for p, v in self._load(shard).items() if p not in fresh}
        on_disk.update(fresh)
        if len(on_disk) > MAX_MEMO_SHARD:
            kept = {p: v for p, v in on_disk.items() if os.path.exists(p)}
            on_disk = dict(list(kept.items())[-MAX_MEMO_SHARD:])
        self._write(shard, on_disk)
        return on_disk

    def _move_older(self, older: Path) -> None:
        """Write what the older memo's shard ``older`` holds into the new shards not
        written yet (one written already took it when it was), and remove it."""
        for digit in _SPREAD:
            shard = older.stem + digit
            if not self._shard_path(shard).exists():
                entries = self._from_older(shard)
                if entries:
                    self._write(shard, entries)
        older.unlink()

    def _write(self, shard: str, entries: dict[str, list[Any]]) -> None:
        payload = json.dumps({"format": MEMO_FORMAT, "entries": entries}, separators=(",", ":"))
        write_atomically(self._shard_path(shard), payload.encode())

    def prune(self) -> int:
        """Forget files that no longer exist; returns how many were forgotten.

        An older memo's shard is moved into the new shards first, then removed.
        """
        if self.root is None or not self.root.is_dir():
            return 0
        for older in sorted(self.root.glob("??.json")):
            self._move_older(older)
        dropped = 0
        for path in sorted(self.root.glob("???.json")):
            shard = path.stem
            entries = self._load(shard)
            kept = {p: v for p, v in entries.items() if os.path.exists(p)}
            if len(kept) != len(entries):
                dropped += len(entries) - len(kept)
                self._write(shard, kept)
        return dropped


def _memo_key(path: str) -> str:
    """The name the digest of ``path`` is remembered by: absolute and lexically
    normal, so that ``p3/../data/big.ms``, ``data/big.ms`` from another
    directory and ``/x/data/big.ms`` share one digest, read once.

    Only a name: ``path`` is looked at and read as given (through a link,
    ``a/link/../x`` is not ``a/x``), and the stat signature remembered with it
    is what must match, so two files under one name only cost a read. No
    realpath: that is a syscall per part of the path, for every lookup of a
    cached re-run.
    """
    if not path.startswith("/"):
        return os.path.abspath(path)
    if "/." in path or "//" in path or path.endswith("/"):  # else normal already
        return os.path.normpath(path)
    return path


def _entries_of(data: Any) -> dict[str, list[Any]]:
    """The entries of a shard read as ``data``; none when it is not one of this format."""
    if not isinstance(data, dict) or data.get("format") != MEMO_FORMAT:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def _link_target(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False
