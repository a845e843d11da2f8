"""The step cache: a result is reused when everything that produced it is unchanged.

A step's key is a digest of the tool's identity (command, schemas, version,
wranglers, declared environment), the resolved argv, the content of every
input file or directory, a project script the command starts by a
relative path, the image (and its digest when the backend can resolve one) and
the backend name. Names come from content, not from paths
or times, so an entry written on a cluster node is a hit on a laptop that
sees the same inputs, and a shared cache directory needs no locks: every
entry is written to a temporary name and renamed into place.

An entry records the digests of the outputs the step left, and what each of
its harvest globs matched. A hit requires them to be there now, with that
content, relative to the current working directory, and every glob to match
the same files (a re-run would harvest a file added since); otherwise the
step runs again. Nothing is copied into the cache: the outputs stay where the
tool wrote them.

A directory's digest covers everything under it, and a symbolic link inside
one counts by what it points to: a Measurement Set whose sub-table is a link
to a shared copy changes when that copy does.

Reading a large input on every run would make the cache useless, so file
digests are memoised by path, device, inode, size, mtime and ctime, in
memory and in per-host files under the cache directory. A digest taken
within :data:`RACY_SECONDS` of the file's last change is not persisted: a
second write in the same timestamp tick would be invisible to the memo.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shinobi.steps.result import StepResult

if TYPE_CHECKING:
    from shinobi.backends.base import Backend, Invocation
    from shinobi.steps.cab import Cab

__all__ = [
    "FORMAT",
    "MAX_CAPTURE",
    "RACY_SECONDS",
    "CacheEntry",
    "DigestMemo",
    "StepCache",
    "write_atomically",
]

#: Bumped whenever the key recipe or the entry layout changes.
FORMAT = 1
#: A digest of a file changed less than this long ago is kept for this run only.
RACY_SECONDS = 2.0
#: The most of a step's stdout/stderr kept in an entry (its tail).
MAX_CAPTURE = 1024 * 1024
#: Memo entries kept per shard (256 shards per host); paths gone are dropped first.
MAX_MEMO_SHARD = 5_000

_CHUNK = 1024 * 1024


def write_atomically(path: Path, data: bytes, *, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` via a temporary name and a rename.

    Readers see the old file or the new one, never a torn one, which is all
    a cache shared between hosts needs. ``fsync`` also survives a crash.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


def _hash_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _read_small(path: str) -> bytes:
    """A small file's bytes, read through a bare descriptor.

    ``open()`` builds a buffered reader per file, which asks the kernel
    whether the file is a terminal and allocates a buffer first: a fully
    cached re-run reads one entry per step, and that came to a third of its
    lookup time in a fresh ``ninja`` process.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):  # a larger read allocates that much first
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


#: The memo shard of each directory seen: a step's files share a few.
_SHARDS: dict[str, str] = {}


class DigestMemo:
    """Content digests of files and directories, memoised by their stat signature.

    The persistent memo is a directory of shards, one per hash of a file's
    parent directory, so a run loads (and rewrites) only the shards of the
    directories it touches however large the memo grows.
    """

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._shards: dict[str, dict[str, list[Any]]] = {}
        self._fresh: dict[str, dict[str, list[Any]]] = {}
        self._racy: dict[str, list[Any]] = {}

    @staticmethod
    def _shard_of(path: str) -> str:
        directory = os.path.dirname(path)
        shard = _SHARDS.get(directory)
        if shard is None:
            digest = hashlib.sha1(directory.encode(), usedforsecurity=False)
            shard = _SHARDS[directory] = digest.hexdigest()[:2]
        return shard

    def _shard_path(self, shard: str) -> Path:
        assert self.root is not None
        return self.root / f"{shard}.json"

    def _load(self, shard: str) -> dict[str, list[Any]]:
        if self.root is None:
            return {}
        try:
            data = json.loads(self._shard_path(shard).read_bytes())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return {}
        entries = data.get("entries")
        return entries if isinstance(entries, dict) else {}

    def _known(self, path: str) -> list[Any] | None:
        shard = self._shard_of(path)
        loaded = self._shards.get(shard)
        if loaded is None:
            loaded = self._shards[shard] = self._load(shard)
        return self._racy.get(path) or self._fresh.get(shard, {}).get(path) or loaded.get(path)

    def file(self, path: str, st: os.stat_result) -> str:
        """The content digest of the regular file ``path`` whose stat is ``st``."""
        signature = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        with self._lock:
            known = self._known(path)
        if known is not None and known[:5] == signature:
            return str(known[5])
        digest = _hash_file(path)
        after = os.stat(path)
        if [after.st_dev, after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns] != (
            signature
        ):
            return digest  # changed while being read: use it, remember nothing
        record = [*signature, digest]
        racy = time.time() - st.st_mtime_ns / 1e9 < RACY_SECONDS
        with self._lock:
            if racy:
                self._racy[path] = record
            else:
                self._racy.pop(path, None)
                self._fresh.setdefault(self._shard_of(path), {})[path] = record
        return digest

    def digest(self, path: str) -> str:
        """``file:HEX``, ``dir:HEX``, ``missing`` or ``special:MODE`` for ``path``
        (links followed)."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return "missing"
        except OSError as exc:
            return f"unreadable:{exc.errno}"
        if stat.S_ISDIR(st.st_mode):
            return "dir:" + self._tree(path, st)
        if stat.S_ISREG(st.st_mode):
            return "file:" + self.file(path, st)
        return f"special:{stat.S_IFMT(st.st_mode)}"

    def _tree(self, root: str, top: os.stat_result) -> str:
        """A digest of every name and file content under the directory ``root``.

        Links are followed: the tool reads what a link points to, so a
        sub-table linked in from elsewhere counts by its content. A link to a
        directory already being walked (a loop) is recorded by its target and
        not entered, as is a link that points nowhere.
        """
        lines: list[str] = []
        stack: list[tuple[str, str, frozenset[tuple[int, int]]]] = [
            ("", root, frozenset({(top.st_dev, top.st_ino)}))
        ]
        while stack:
            rel, base, walking = stack.pop()
            try:
                entries = sorted(os.scandir(base), key=lambda e: e.name)
            except OSError as exc:
                lines.append(f"{rel}\0unreadable:{exc.errno}")
                continue
            for entry in entries:
                name = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    st = entry.stat()  # through a link
                except OSError as exc:
                    if exc.errno == errno.ENOENT and entry.is_symlink():
                        lines.append(f"{name}\0dangling:{_link_target(entry.path)}")
                    else:
                        lines.append(f"{name}\0unreadable:{exc.errno}")
                    continue
                if stat.S_ISDIR(st.st_mode):
                    identity = (st.st_dev, st.st_ino)
                    if identity in walking:
                        lines.append(f"{name}\0loop:{_link_target(entry.path)}")
                        continue
                    lines.append(f"{name}\0dir")
                    stack.append((name, entry.path, walking | {identity}))
                elif stat.S_ISREG(st.st_mode):
                    lines.append(f"{name}\0file:{self.file(entry.path, st)}")
                else:
                    lines.append(f"{name}\0special")
        lines.sort()
        return hashlib.sha256("\n".join(lines).encode()).hexdigest()

    def save(self) -> None:
        """Merge what this run learnt into the memo (last writer wins per path)."""
        if self.root is None or not self._fresh:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        for shard, fresh in self._fresh.items():
            on_disk = self._load(shard)
            on_disk.update(fresh)
            if len(on_disk) > MAX_MEMO_SHARD:
                kept = {p: v for p, v in on_disk.items() if os.path.exists(p)}
                on_disk = dict(list(kept.items())[-MAX_MEMO_SHARD:])
            self._write(shard, on_disk)
            self._shards[shard] = on_disk
        self._fresh = {}

    def _write(self, shard: str, entries: dict[str, list[Any]]) -> None:
        payload = json.dumps({"format": FORMAT, "entries": entries}, separators=(",", ":"))
        write_atomically(self._shard_path(shard), payload.encode())

    def prune(self) -> int:
        """Forget files that no longer exist; returns how many were forgotten."""
        if self.root is None or not self.root.is_dir():
            return 0
        dropped = 0
        for path in sorted(self.root.glob("*.json")):
            shard = path.stem
            entries = self._load(shard)
            kept = {p: v for p, v in entries.items() if os.path.exists(p)}
            if len(kept) != len(entries):
                dropped += len(entries) - len(kept)
                self._write(shard, kept)
        return dropped


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
    #: in an entry written before they were recorded, which can never hit.
    globs: list[tuple[str, list[str]]] | None = None


def _relative(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


def _link_target(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _globs(recorded: Any) -> list[tuple[str, list[str]]] | None:
    if not isinstance(recorded, list):
        return None
    return [(str(pattern), [str(m) for m in matched]) for pattern, matched in recorded]


def _harvested(pattern: str, cwd: str) -> list[str]:
    """What the harvest glob ``pattern`` (relative to ``cwd``, or absolute) matches now."""
    return [_relative(match, cwd) for match in sorted(glob.glob(os.path.join(cwd, pattern)))]


def _json_default(value: Any) -> Any:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


class StepCache:
    """A content-addressed store of step results under ``root`` (see the module docstring)."""

    def __init__(self, root: Path, run_id: str = "") -> None:
        self.root = Path(root)
        self.run_id = run_id
        self.host = socket.gethostname()
        self.memo = DigestMemo(self.root / "memo" / self.host)
        self._identities: dict[int, tuple[Cab, str]] = {}
        self._images: dict[tuple[str, str], str | None] = {}
        self._tools: dict[tuple[str, str], str] = {}
        self._dirs: set[str] = set()
        self._entries_dir = str(self.root / "entries")

    # -- keys ------------------------------------------------------------------
    def _identity(self, cab: Cab) -> str:
        known = self._identities.get(id(cab))
        if known is not None and known[0] is cab:
            return known[1]
        text = json.dumps(cab.identity(), sort_keys=True, default=repr)
        digest = hashlib.sha256(text.encode()).hexdigest()
        self._identities[id(cab)] = (cab, digest)
        return digest

    def _image(self, image: str | None, backend: Backend | None, backend_name: str) -> Any:
        if image is None:
            return None
        probe = getattr(backend, "image_digest", None)
        if probe is None:
            return image
        slot = (backend_name, image)
        if slot not in self._images:
            try:
                self._images[slot] = probe(image)
            except Exception:
                self._images[slot] = None
        return [image, self._images[slot]]

    def _scripts(self, cab: Cab, invocation: Invocation) -> list[str] | None:
        """The content of every project file the cab's own command names, or None.

        A command that runs a script of the project (``./calibrate.sh``,
        ``python3 scripts/flag.py``, ``bash tools/run.sh``) is keyed by that
        script's content, so editing it reruns the step. A project file is a
        relative path in the command the cab declares (not in the values the
        step is given: those are inputs, keyed as such) that is a file under
        the step's directory; the program itself counts only when spelled as
        a path, as a bare name is looked up on PATH. Installed programs are
        not keyed by content: hosts sharing a cache have different
        installations and would never share a result otherwise (bump the
        cab's ``version=`` after upgrading a tool).
        """
        if not cab.command:  # the working directory is mounted into a container too
            return None
        program, *arguments = cab.command
        named = [program] if os.sep in program else []
        named += [a for a in arguments if not a.startswith("-")]
        digests = []
        for name in named:
            if os.path.isabs(name):
                continue
            slot = (name, invocation.cwd)
            known = self._tools.get(slot)
            if known is None:
                path = os.path.join(invocation.cwd, name)
                known = self._tools[slot] = self.memo.digest(path) if os.path.isfile(path) else ""
            if known:
                digests.append(known)
        return digests or None

    def key(
        self,
        cab: Cab,
        invocation: Invocation,
        backend_name: str,
        backend: Backend | None = None,
    ) -> str | None:
        """The key of running ``cab`` as ``invocation`` on ``backend_name``.

        None means "do not cache": an input that cannot be read.
        """
        inputs = []
        for use in invocation.paths:
            if use.role != "input":
                continue
            digest = self.memo.digest(use.path)
            if digest.startswith("unreadable"):
                return None
            inputs.append((use.field, digest))
        material = [
            FORMAT,
            self._identity(cab),
            invocation.argv,
            inputs,
            self._image(invocation.image, backend, backend_name),
            self._scripts(cab, invocation),
            backend_name,
            # the venv a step runs in decides which installation its command is
            invocation.venv,
        ]
        text = json.dumps(material, separators=(",", ":"), default=_json_default)
        return hashlib.sha256(text.encode()).hexdigest()

    def _entry_path(self, key: str) -> str:
        return os.path.join(self._entries_dir, key[:2], f"{key}.json")

    # -- lookup and store ----------------------------------------------------
    def lookup(self, key: str, name: str, cwd: str) -> StepResult | None:
        """The stored result for ``key`` if its outputs are still there, unchanged."""
        try:
            data = json.loads(_read_small(self._entry_path(key)))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
            return None
        for rel, digest in data.get("files", []):
            if self.memo.digest(os.path.join(cwd, rel)) != digest:
                return None
        globs = data.get("globs")
        if not isinstance(globs, list):
            return None  # written before entries recorded their globs: run, and rewrite it
        for pattern, matched in globs:
            if _harvested(pattern, cwd) != matched:
                return None
        now = time.time()
        hit = StepResult(
            name=name,
            status="cached",
            outputs=dict(data.get("outputs", {})),
            returncode=data.get("returncode", 0),
            stdout=data.get("stdout", ""),
            stderr=data.get("stderr", ""),
            warnings=list(data.get("warnings", [])),
            argv=data.get("argv"),
            started=now,
            finished=now,
            details={
                "cache_key": key,
                "cached_from": data.get("run_id"),
                "cached_at": data.get("created"),
                "cached_host": data.get("host"),
            },
        )
        if data.get("until_changed") is not None:  # a loop's step: see shinobi.stale_until
            hit.details["until_changed"] = data["until_changed"]
        return hit

    def _output_files(
        self, result: StepResult, invocation: Invocation, cab: Cab | None
    ) -> set[str]:
        files = {use.path for use in invocation.paths if use.role == "output" and not use.pattern}
        if cab is not None:
            from shinobi.steps.types import fields_of

            for name, spec in fields_of(cab.outputs_model).items():
                value = result.outputs.get(name)
                meta = cab.meta(name)
                # a harvested output names files whatever its type (see steps.argv.path_uses)
                if value is None or not (spec.path_kind or meta.dtype or meta.harvest):
                    continue
                for item in value if isinstance(value, list | tuple) else [value]:
                    files.add(os.path.join(invocation.cwd, os.fspath(item)))
        return {f for f in files if os.path.lexists(f)}

    def store(
        self, key: str, result: StepResult, invocation: Invocation, cab: Cab | None = None
    ) -> None:
        """Record a successful ``result``; a failure to write only loses the entry."""
        cwd = invocation.cwd
        files = sorted(
            (_relative(path, cwd), self.memo.digest(path))
            for path in self._output_files(result, invocation, cab)
        )
        globs = [
            [pattern, _harvested(pattern, cwd)]
            for pattern in sorted(
                {
                    _relative(use.path, cwd)
                    for use in invocation.paths
                    if use.role == "output" and use.pattern
                }
            )
        ]
        entry = {
            "format": FORMAT,
            "key": key,
            "step": result.name,
            "tool": cab.name if cab is not None else None,
            "argv": list(invocation.argv),
            "backend": result.backend,
            "image": invocation.image,
            "image_digest": result.details.get("image_digest"),
            "until_changed": result.details.get("until_changed"),
            "outputs": result.outputs,
            "returncode": result.returncode,
            "stdout": result.stdout[-MAX_CAPTURE:],
            "stderr": result.stderr[-MAX_CAPTURE:],
            "warnings": result.warnings,
            "files": files,
            "globs": globs,
            "created": time.time(),
            "run_id": self.run_id,
            "host": self.host,
            "cwd": cwd,
        }
        path = Path(self._entry_path(key))
        try:
            if str(path.parent) not in self._dirs:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._dirs.add(str(path.parent))
            data = json.dumps(entry, separators=(",", ":"), default=_json_default)
            write_atomically(path, data.encode())
        except OSError:
            return
        result.details["cache_key"] = key

    def close(self) -> None:
        """Persist the digest memo; called once at the end of a run."""
        with contextlib.suppress(OSError):
            self.memo.save()

    # -- management (ninja cache) --------------------------------------------
    def entries(self) -> Iterator[CacheEntry]:
        """Every readable entry, in no particular order."""
        base = self.root / "entries"
        if not base.is_dir():
            return
        for shard in sorted(base.iterdir()):
            if not shard.is_dir():
                continue
            for path in sorted(shard.glob("*.json")):
                try:
                    raw = path.read_bytes()
                    data = json.loads(raw)
                except (OSError, ValueError):
                    continue
                if not isinstance(data, dict) or data.get("format") != FORMAT:
                    continue
                yield CacheEntry(
                    key=str(data.get("key", path.stem)),
                    path=path,
                    step=str(data.get("step", "?")),
                    tool=str(data.get("tool") or "?"),
                    created=float(data.get("created", 0.0)),
                    run_id=str(data.get("run_id", "")),
                    host=str(data.get("host", "")),
                    cwd=str(data.get("cwd", "")),
                    files=[(str(a), str(b)) for a, b in data.get("files", [])],
                    size=len(raw),
                    globs=_globs(data.get("globs")),
                )

    def is_stale(self, entry: CacheEntry) -> bool:
        """Whether ``entry`` can no longer hit where it was made: an output gone or
        changed, or a harvest glob that matches other files now."""
        if entry.globs is None:
            return True
        return any(
            self.memo.digest(os.path.join(entry.cwd, rel)) != digest for rel, digest in entry.files
        ) or any(_harvested(pattern, entry.cwd) != matched for pattern, matched in entry.globs)

    def remove(self, entry: CacheEntry) -> None:
        with contextlib.suppress(FileNotFoundError):
            entry.path.unlink()

    def leftovers(self, older_than: float = 3600.0) -> list[Path]:
        """Temporary files of writers that died before renaming them into place.

        Only where the cache writes them (an entry's shard, a host's memo),
        named as :func:`write_atomically` names them: whatever else lies under
        the cache directory is not the cache's to remove.
        """
        cutoff = time.time() - older_than
        found: list[Path] = []
        for path in (
            *self.root.glob("entries/*/.*.json.*.tmp"),
            *self.root.glob("memo/*/.*.json.*.tmp"),
        ):
            try:
                if path.stat().st_mtime < cutoff:
                    found.append(path)
            except OSError:
                continue
        return found
