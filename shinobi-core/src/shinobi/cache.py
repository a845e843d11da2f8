"""The step cache: a result is reused when everything that produced it is unchanged.

A step's key is a digest of the tool's identity (command, schemas, version,
wranglers, declared environment), the resolved argv, the content of every
input file or directory, the content of every file the cab's command names
by a path (a script, a ``.py`` handed to an interpreter; a compiled program
named by an absolute path is known by its name, as an installed one is), the
image (and its digest when the backend can resolve one) and the backend
name. Names come from content, not from paths or times, so an entry written
on a cluster node is a hit on a laptop that sees the same inputs, and a
shared cache directory needs no locks: every entry is written to a temporary
name and renamed into place.

An entry records the digests of the outputs the step left, and what each of
its harvest globs matched. A hit requires them to be there now, with that
content, relative to the current working directory, and every glob to match
the same files (a re-run would harvest a file added since); otherwise the
step runs again. Nothing is copied into the cache: the outputs stay where the
tool wrote them. An output value that is an absolute path inside the step's
working directory is recorded relative to it and made absolute again under
the directory of the run that reuses it, so a hit never hands a step another
project's file. A hit also sets the entry file's modification time, its last
use (:func:`~shinobi.cache_entries.mark_used`): ``ninja cache prune
--older-than`` goes by it.

What cannot be read is never a hit and never a crash: an unreadable input
means the step is not cached, an unreadable output means its result is not
stored, and an entry that is torn or damaged reads as a miss.

A directory's digest covers everything under it, and a symbolic link inside
one counts by what it points to: a Measurement Set whose sub-table is a link
to a shared copy changes when that copy does.

Reading a large input on every run would make the cache useless, so file
digests are memoised (:mod:`shinobi.file_digests`); what an entry holds, and
whether it can be used, is :mod:`shinobi.cache_entries`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shinobi.cache_entries import (
    FORMAT,
    USED_CWD,
    USED_HOST,
    CacheEntry,
    anchored_outputs,
    mark_used,
    parse_entry,
    read_entry,
    read_small,
    reanchor,
    relative_path,
    unreplayable,
    working_bases,
)
from shinobi.cache_limits import FIELD as LIMITS_FIELD
from shinobi.cache_limits import Limits, limits_satisfy
from shinobi.cache_settle import IN_PLACE, SETTLED, RunWrites
from shinobi.file_digests import (
    MEMO_FORMAT,
    RACY_SECONDS,
    TEMP_PREFIX,
    DigestMemo,
    DigestStopped,
    Stopping,
    is_compiled,
    make_dirs,
    unreadable_digest,
    write_atomically,
)
from shinobi.harvest import anchored, harvest
from shinobi.host_name import this_host
from shinobi.steps.result import StepResult

if TYPE_CHECKING:
    from shinobi.backends.base import Backend, Invocation
    from shinobi.steps.cab import Cab

__all__ = [
    "FORMAT",
    "MAX_CAPTURE",
    "MEMO_FORMAT",
    "RACY_SECONDS",
    "CacheEntry",
    "DigestMemo",
    "StepCache",
    "write_atomically",
]

#: The most of a step's stdout/stderr kept in an entry (its tail).
MAX_CAPTURE = 1024 * 1024

_HEX = frozenset("0123456789abcdef")


#: A permission the cache directory refuses: the usual cause is another user's
#: directory in a cache shared by a group (see "A cache shared by a group" in
#: docs/cache.md).
_PERMISSIONS_FIX = (
    "let this user write there (in a cache shared by a group, the directory's owner"
    " can `chmod g+w` it)"
)
#: What to do about a write the cache directory refused, by its errno.
_REFUSAL_FIXES = {
    errno.ENOSPC: "free space there",
    errno.EDQUOT: "free space there, or ask for a larger quota",
    errno.EACCES: _PERMISSIONS_FIX,
    errno.EPERM: _PERMISSIONS_FIX,
    errno.EROFS: "it is on a read-only file system: mount it writable",
}


def _refused_cause(exc: OSError) -> str:
    """What refused a write under the cache directory. A permission names the
    directory that refused it: what the error names is a temporary file in it,
    or a directory to be made in it."""
    said = exc.strerror or str(exc)
    if exc.errno in (errno.EACCES, errno.EPERM) and isinstance(exc.filename, str):
        return f"{said}: {os.path.dirname(exc.filename)}"
    return said


def _refused_fix(exc: OSError) -> str:
    """The fix of a write refused under the cache directory, by its cause: a
    permission problem was told to free space."""
    fix = _REFUSAL_FIXES.get(exc.errno or 0)
    then = f"{fix}, or set" if fix else "set"
    return f"{then} cache.dir (SHINOBI_CACHE_DIR) to a writable directory"


def _is_key(name: str) -> bool:
    """Whether ``name`` is a cache key as the cache spells one (a SHA-256, in hex)."""
    return len(name) == 64 and _HEX.issuperset(name)


def _harvested(pattern: str, cwd: str) -> list[str] | None:
    """What the harvest glob ``pattern`` (relative to ``cwd``, or absolute) matches
    now; None, which matches no record, for a pattern no path can hold."""
    try:
        matches = harvest(anchored(cwd, pattern))
    except ValueError:  # a NUL byte, in a damaged entry
        return None
    return [relative_path(match, (cwd,)) for match in matches]


def _json_default(value: Any) -> Any:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


#: The encoder of a key's material, made once: ``json.dumps`` given any option
#: builds a new encoder (and its C scanner) on every call, once per step here.
_KEY_JSON = json.JSONEncoder(separators=(",", ":"), default=_json_default)


def _project_relative(words: Sequence[str], cwd: str) -> list[str]:
    """``words`` with every absolute path inside ``cwd`` made relative to it.

    The working directory is not part of what a step is: a tool found through
    ``Path(__file__).resolve().parent`` is named absolutely, yet a copied
    project runs the same script (whose content is keyed on its own).
    """
    prefix = cwd.rstrip("/") + "/"
    return [_inside(word, prefix) for word in words]


def _inside(word: str, prefix: str) -> str:
    """``word`` relative to the working directory ``prefix`` when it lies inside it.

    A path that starts with the prefix yet climbs out of it (``CWD/../out/x``,
    what ``--dst ../out/x`` becomes) stays absolute: a copied project writing
    to its own ``../out/x`` must not share the key of the original's, whose
    entry would hand it the original's file as a hit.
    """
    if not word.startswith(prefix):
        if "=" not in word:
            return word
        key, _, value = word.partition("=")
        if value.startswith(prefix):  # ``vis=/proj/obs.ms``, ``--out=/proj/x``
            return f"{key}={_inside(value, prefix)}"
        return word
    rel = word[len(prefix) :]
    if os.pardir in rel:  # rare: only then is the path normalised to see where it ends
        climbed = os.path.normpath(rel)
        if climbed == os.pardir or climbed.startswith(os.pardir + os.sep):
            return word
    return rel


#: The digest of a file this user may not read (EACCES): another user's.
_NOT_MINE = f"unreadable:{errno.EACCES}"


def changed_between(before: list[Any], now: list[Any] | None) -> str | None:
    """What a step's key was made of (``before``, :meth:`StepCache.material`) that is
    no longer so once it has run (``now``), or None.

    The tool read its inputs (and script) when it read them, not when they
    were hashed: one edited while the step ran (a parameter file fixed
    mid-run, a step queued for hours on a cluster) would store the result of
    the new content under the key of the old, and a later run with the old
    content would replay it. Making the material again costs a ``stat`` per
    file: the memo reads again only what changed.
    """
    if now == before:
        return None
    if now is None:
        return "an input or the script it runs (now unreadable)"
    for (field, digest), (_, digest_now) in zip(
        before[_KEYED_INPUTS], now[_KEYED_INPUTS], strict=False
    ):
        if digest != digest_now:
            return f"its input {field!r}"
    if before[_SCRIPTS] != now[_SCRIPTS] and not _made_by_the_step(
        before[_SCRIPTS] or [], now[_SCRIPTS] or []
    ):
        return "the script its command runs"
    if _but_scripts(now) == _but_scripts(before):
        return None  # the step made a file its command names
    return "what its key is made of"


def _but_scripts(material: list[Any]) -> list[Any]:
    return [*material[:_SCRIPTS], *material[_SCRIPTS + 1 :]]


def _made_by_the_step(before: list[str], now: list[str]) -> bool:
    """Whether the files the command names changed only by new ones: a word of the
    command that named nothing when the key was made names the file the step
    wrote (``touch done.flag``), which is its product, not a script edited."""
    left = list(now)
    for digest in before:
        if digest not in left:
            return False
        left.remove(digest)
    return bool(left)


#: Where :meth:`StepCache.material` puts the inputs' digests and the scripts'.
_KEYED_INPUTS, _SCRIPTS = 3, 6


def key_of(material: list[Any]) -> str:
    """The key :meth:`StepCache.key` gives for ``material``."""
    return hashlib.sha256(_KEY_JSON.encode(material).encode()).hexdigest()


def _written_inside(folder: str, written: Sequence[str]) -> tuple[str, ...]:
    """The paths of ``written`` (normalised) that lie inside ``folder``."""
    prefix = os.path.normpath(folder).rstrip("/") + "/"
    return tuple(path for path in written if path.startswith(prefix))


def _fixed_values(
    cab: Cab, fixed: Mapping[str, Any] | None, invocation: Invocation
) -> dict[str, Any]:
    """The outputs known before the run that are not paths, keyed by field.

    A text output filled from a ``skip`` input (``label = "img-{band}"``) or
    an output's default is handed on as the step's result, yet neither is on
    the command line: a changed band replayed the old label. Paths are keyed
    where they are written (:func:`_products`), relative to the project. Which
    outputs may be such a value is a fact of the cab, worked out once: most
    cabs have none, and pay nothing per step.
    """
    candidates = cab.kept("_keyed_outputs", _outputs_not_paths)
    if not fixed or not candidates:
        return {}
    from shinobi.steps.argv import Unknown

    paths = {use.field for use in invocation.paths}  # a path in or out: keyed as such
    return {
        name: value
        for name in candidates
        if name in fixed
        and name not in paths
        and (value := fixed[name]) is not None
        and not isinstance(value, Unknown | os.PathLike)
        and not (isinstance(value, list | tuple) and any(isinstance(v, os.PathLike) for v in value))
    }


def _outputs_not_paths(cab: Cab) -> tuple[str, ...]:
    """The output fields of ``cab`` that hold no path, in name order."""
    from shinobi.steps.types import fields_of

    specs = fields_of(cab.outputs_model) if cab.outputs_model is not None else {}
    return tuple(
        sorted(
            name for name, spec in specs.items() if spec.path_kind is None and not spec.nested_paths
        )
    )


def _products(invocation: Invocation) -> list[tuple[str, str, bool]]:
    """Where the step writes: its outputs' paths and harvest patterns.

    They are part of what a step is even when no argument names them: an
    output templated from a ``skip`` input (``obs-{kind}.fits``) changes with
    that input while the command line does not. A path inside the working
    directory is taken relative to it, so a copied project still hits.
    """
    cwd = invocation.cwd
    products = []
    for use in invocation.paths:
        if use.role == "output":
            (shown,) = _project_relative([use.path], cwd)
            products.append((use.field, shown, use.pattern))
    return products


class StepCache:
    """A content-addressed store of step results under ``root`` (see the module docstring)."""

    def __init__(self, root: Path, run_id: str = "") -> None:
        self.root = Path(root)
        self.run_id = run_id
        self.host = this_host()
        self.memo = DigestMemo(self.root / "memo" / self.host)
        # what a large read learnt is saved at once, not only when the run ends: a
        # run killed hours in (kill -9, out of memory, a node lost) would read it
        # all again next time
        self.memo.after_large = self._save_memo
        self._identities: dict[int, tuple[Cab, str, str]] = {}
        self._images: dict[tuple[str, str, str], str | None] = {}
        self._tools: dict[tuple[str, str], tuple[tuple[int, ...], str]] = {}
        #: Command words naming an installed program (a compiled one by an absolute
        #: path), known by name: not looked at again for each step
        self._installed: set[tuple[str, str]] = set()
        self._dirs: set[str] = set()
        #: What the run's steps wrote and stored, for :meth:`close` to settle
        self.writes = RunWrites()
        #: Whether an entry recorded as a later in-place rewrite left its outputs
        #: may be replayed: not in a run with a rewrite that is not safe to replay,
        #: which would then rewrite data rewritten already (see shinobi.cache_settle)
        self.trust_settled = True
        #: The folders of entries the last :meth:`entries` could not read (another
        #: user's, made under umask 077): their entries were not listed.
        self.unlisted: list[str] = []
        #: working_bases of each working directory, resolved once (a realpath per step
        #: stored was a tenth of storing a small step's entry)
        self._bases: dict[str, tuple[str, ...]] = {}
        self._entries_dir = str(self.root / "entries")
        #: Told when the disk refuses what the cache writes (full, read-only, another
        #: user's directory): what to say, and what it is about (``entries``,
        #: ``memo``, ``forget``), to be said once a run each.
        self.on_refused: Callable[[str, str], None] | None = None
        #: What each step's key was made of, by step name: ``[field, path, digest]``
        #: of every input it reads. None unless the run manifest asks for it (a
        #: dict), which takes (pops) it when the step ends, so a scientist sees
        #: which content a result came from.
        self.read_inputs: dict[str, list[list[str]]] | None = None

    # -- keys ------------------------------------------------------------------
    def _identity(self, cab: Cab, cwd: str) -> str:
        known = self._identities.get(id(cab))
        if known is not None and known[0] is cab and known[1] == cwd:
            return known[2]
        identity = cab.identity()
        identity["command"] = _project_relative(identity["command"], cwd)
        text = json.dumps(identity, sort_keys=True, default=repr)
        digest = hashlib.sha256(text.encode()).hexdigest()
        self._identities[id(cab)] = (cab, cwd, digest)
        return digest

    def _image(
        self, image: str | None, backend: Backend | None, backend_name: str, cwd: str
    ) -> Any:
        if image is None:
            return None
        probe = getattr(backend, "image_digest", None)
        if probe is None:
            return image
        slot = (backend_name, image, cwd)  # an image file may be named relative to the step
        if slot not in self._images:
            try:
                self._images[slot] = probe(image, cwd)
            except Exception:
                self._images[slot] = None
        return [image, self._images[slot]]

    def _scripts(self, cab: Cab, invocation: Invocation) -> list[str] | None:
        """The content of every file the cab's own command names by a path, or None.

        A command that runs a script (``./calibrate.sh``, ``python3
        scripts/flag.py``, ``/home/me/project/tools/run.sh``) is keyed by that
        script's content, so editing it reruns the step. Only the command the
        cab declares counts (the values the step is given are inputs, keyed
        as such), and the program only when spelt as a path: a bare name is
        looked up on PATH and known by that name. Each path is read once a run
        while its ``stat`` stays as it was (see :meth:`_script`).
        """
        if not cab.command:  # the working directory is mounted into a container too
            return None
        program, *arguments = cab.command
        named = [program] if os.sep in program else []
        named += [a for a in arguments if not a.startswith("-")]
        digests = []
        for name in named:
            slot = (name, invocation.cwd)
            if slot in self._installed:
                continue  # an installed program, known by its name whatever it holds
            known = self._tools.get(slot)
            path = os.path.join(invocation.cwd, name)  # an absolute name stays as it is
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                continue  # nothing there (most words are not paths): known by name
            # looked at again on every use: a script edited while the run goes on keys
            # the steps that start after the edit by what they run
            seen = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            if known is None or known[0] != seen:
                known = self._tools[slot] = (seen, self._script(name, path, st))
                if not known[1] and os.path.isabs(name):
                    self._installed.add(slot)
            if known[1]:
                digests.append(known[1])
        return digests or None

    def _script(self, name: str, path: str, st: os.stat_result) -> str:
        """The digest of the file the command word ``name`` names, or "" to go by name.

        "" when nothing is there or it is not a regular file (most words are
        not paths at all), and for a compiled program named by an absolute
        path (``/usr/bin/python3``): installed programs differ between hosts
        sharing a cache, which would never share a result otherwise (bump the
        cab's ``version=`` after upgrading one). A relative path is the
        project's own, so even a compiled one counts by content.
        ``unreadable:ERRNO`` when it cannot be read: the step is then not cached.
        """
        if not stat.S_ISREG(st.st_mode):
            return ""
        if os.path.isabs(name):
            try:
                if is_compiled(path):
                    return ""
            except OSError as exc:
                return unreadable_digest(exc)
        return self.memo.file(path, st)

    def key(
        self,
        cab: Cab,
        invocation: Invocation,
        backend_name: str,
        backend: Backend | None = None,
        stopping: Stopping | None = None,
        fixed_outputs: Mapping[str, Any] | None = None,
    ) -> str | None:
        """The key of running ``cab`` as ``invocation`` on ``backend_name``.

        None means "do not cache": an input, or a script the command names,
        that cannot be read (its content, hence the step, is unknown).
        Raises :class:`DigestStopped` when ``stopping`` says so while an
        input is being hashed. ``fixed_outputs``: the outputs known before the
        run (:func:`~shinobi.steps.outputs.static_outputs`).
        """
        material = self.material(cab, invocation, backend_name, backend, stopping, fixed_outputs)
        return None if material is None else key_of(material)

    def material(
        self,
        cab: Cab,
        invocation: Invocation,
        backend_name: str,
        backend: Backend | None = None,
        stopping: Stopping | None = None,
        fixed_outputs: Mapping[str, Any] | None = None,
    ) -> list[Any] | None:
        """What :meth:`key` hashes (None: do not cache), for :func:`changed_between`.

        Its items are in a fixed order (:data:`_KEYED_INPUTS`, :data:`_SCRIPTS`).
        """
        inputs = []
        keyed = []
        written: list[str] | None = None  # worked out for the first input only
        with self.memo.batch():  # a step's inputs, and its scripts, are one read
            for use in invocation.paths:
                if use.role != "input":
                    continue
                if written is None:
                    written = [
                        os.path.normpath(out.path)
                        for out in invocation.paths
                        if out.role == "output" and not out.pattern
                    ]
                # a folder the step writes its own outputs into (``outdir``) is keyed
                # without them: else the product of its last run changed its key, and
                # it never hit again
                inside = _written_inside(use.path, written) if written else ()
                digest = self.memo.digest(use.path, stopping, inside)
                if digest.startswith(("unreadable", "special")):
                    return None  # unknown content, or a pipe/device: never the same twice
                inputs.append((use.field, digest))
                # An input rewritten in place is keyed by where it is, not by what it
                # holds: its content before the step is what a replay must NOT find (the
                # rewrite would be skipped); the entry records it as the step left it,
                # and a hit requires that (see _output_files).
                keyed.append(
                    (use.field, ["rewritten", *_project_relative([use.path], invocation.cwd)])
                    if use.mutable
                    else (use.field, digest)
                )
            scripts = self._scripts(cab, invocation)
        if scripts is not None and any(d.startswith("unreadable") for d in scripts):
            return None
        material = [
            FORMAT,
            self._identity(cab, invocation.cwd),
            _project_relative(invocation.argv, invocation.cwd),
            keyed,
            _products(invocation),
            self._image(invocation.image, backend, backend_name, invocation.cwd),
            scripts,
            backend_name,
            # the venv a step runs in decides which installation its command is
            invocation.venv,
        ]
        fixed = _fixed_values(cab, fixed_outputs, invocation)
        if fixed:  # only then: every other step keeps the key it had
            material.append(fixed)
        if self.read_inputs is not None:
            uses = [use for use in invocation.paths if use.role == "input"]
            self.read_inputs[invocation.step] = [
                [field, use.path, digest] for (field, digest), use in zip(inputs, uses, strict=True)
            ]
        return material

    def _entry_path(self, key: str) -> str:
        # a key is hex (see key()): plain text joins it, for a hit per step to open
        return f"{self._entries_dir}/{key[:2]}/{key}.json"

    # -- lookup and store ----------------------------------------------------
    def lookup(
        self,
        key: str,
        name: str,
        cwd: str,
        stopping: Stopping | None = None,
        limits: Limits | None = None,
    ) -> StepResult | None:
        """The stored result for ``key`` if its outputs are still there, unchanged.

        An entry that is torn, damaged or of another format is a miss: the
        step runs, and rewrites it. So is one made without ``limits``, the
        limits the run demands be applied (see :mod:`shinobi.cache_limits`).
        Raises :class:`DigestStopped` when ``stopping`` says so while an
        output is being hashed.
        """
        path = self._entry_path(key)
        try:
            raw, stamped = read_small(path)
            data = parse_entry(raw)
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
            return None
        if unreplayable(data) is not None:
            return None
        if limits is not None and not limits_satisfy(data.get(LIMITS_FIELD), limits):
            return None  # made without the limits this run must apply: run it under them
        if data.get(SETTLED) == IN_PLACE and not self.trust_settled:
            return None  # its outputs as a rewrite left them: this run rewrites unsafely
        made_here = self.run_id and data.get("run_id") == self.run_id
        if made_here and (data.get("files") or data.get("globs")):
            # This very run made it (another step, or this one's earlier ctx.run()):
            # the same command writing the same paths twice in one run acts on what
            # the first left (an append, an in-place rewrite), so it runs again. One
            # that writes no file is replayed, as it would be from another run.
            return None
        outputs = data["outputs"]
        try:  # the lists are walked anyway: one of the wrong shape fails as it is
            if not self._unchanged(data["files"], cwd, stopping):
                return None
            for pattern, matched in data["globs"]:
                if _harvested(pattern, cwd) != matched:
                    return None
            anchors = data["anchored"]
            if anchors:
                reanchor(outputs, anchors, cwd)
        except (KeyError, TypeError, ValueError, IndexError):
            return None  # damaged (see _malformed): run the step, and rewrite it
        now = time.time()
        hit = StepResult(
            name=name,
            status="cached",
            outputs=outputs,
            returncode=data["returncode"],
            stdout=data["stdout"],
            stderr=data["stderr"],
            warnings=data["warnings"],
            argv=data["argv"],
            started=now,
            finished=now,
            details={
                "cache_key": key,
                "cached_from": data["run_id"],
                # the step's name in that run: a step of the same command elsewhere
                "cached_step": data["step"],
                "cached_at": data["created"],
                "cached_host": data["host"],
            },
        )
        if data["until_changed"] is not None:  # a loop's step: see shinobi.stale_until
            hit.details["until_changed"] = data["until_changed"]
        pinned = data.get("image_digest")
        if type(pinned) is str:  # the image the result was made with, for the manifest
            hit.details["image_digest"] = pinned
        if data.get(USED_CWD, data.get("cwd")) != cwd:
            self._moved(key, raw, cwd)  # written anew, so stamped as used now too
        else:
            mark_used(path, stamped, now)
        return hit

    def _unchanged(
        self, files: list[tuple[str, str]], cwd: str, stopping: Stopping | None = None
    ) -> bool:
        """Whether every file an entry records, relative to ``cwd``, still has its
        digest (the first that differs ends the look)."""
        with self.memo.batch():
            return all(
                self.memo.digest(os.path.join(cwd, rel), stopping) == digest
                for rel, digest in files
            )

    def _moved(self, key: str, raw: bytes, cwd: str) -> None:
        """Record that the entry stored as ``raw`` was just hit in ``cwd``, another
        directory than the one it records (a moved or copied project).

        ``ninja cache ls --stale`` and ``prune`` check an entry's outputs where
        it was last used: where it was made, those of a moved project are gone,
        and an entry that still hits would be called stale and deleted. Only a
        hit in another place rewrites it (a cached re-run in the same place
        rewrites nothing: at most it sets the time of last use, see
        ``mark_used``), as a store does: whole, under a temporary name. The run needs
        none of it, so a cache it cannot write to (shared, read-only) is not
        said: the entry only keeps its old place.
        """
        try:
            data = json.loads(raw)  # afresh: the hit's outputs were re-anchored in place
            data[USED_CWD] = cwd
            data[USED_HOST] = self.host
            text = json.dumps(data, separators=(",", ":"))
            write_atomically(Path(self._entry_path(key)), text.encode())
        except (OSError, ValueError, RecursionError):
            return

    def _output_files(
        self, result: StepResult, invocation: Invocation, cab: Cab | None
    ) -> set[str]:
        """Every file the step's outputs name, and every input it rewrites in place,
        absolute, that is there now: what a hit must find as the step left it.

        A path-typed, ``dtype`` or harvested output names files whatever its
        value looks like (see steps.argv.path_uses). Any other output counts
        when it is an absolute path to a regular file: it is handed on as a
        path, so it is verified like one, but a directory is not walked for
        a value that was only ever declared as text.

        An input rewritten in place (a flagger's MS) counts as the step left it:
        a replay is right only when the data already is in that state (an
        idempotent step run again would leave it so); found as it was before the
        step, say remade by the step before it, the step runs again.
        """
        cwd = invocation.cwd
        files = {
            use.path
            for use in invocation.paths
            if (use.role == "output" and not use.pattern) or (use.role == "input" and use.mutable)
        }
        if cab is not None:
            from shinobi.steps.types import fields_of

            for name, spec in fields_of(cab.outputs_model).items():
                value = result.outputs.get(name)
                if value is None:
                    continue
                meta = cab.meta(name)
                names_files = bool(spec.path_kind or meta.dtype or meta.harvest)
                for item in value if isinstance(value, list | tuple) else [value]:
                    text = os.fspath(item) if isinstance(item, os.PathLike) else item
                    if not isinstance(text, str):
                        continue
                    path = os.path.join(cwd, text)
                    if names_files or (os.path.isabs(text) and os.path.isfile(path)):
                        files.add(path)
        return {f for f in files if os.path.lexists(f)}

    def _recorded_files(
        self,
        result: StepResult,
        invocation: Invocation,
        cab: Cab | None,
        bases: tuple[str, ...],
        stopping: Stopping | None,
    ) -> list[tuple[str, str]] | None:
        """The digest of every output file, relative where it is inside the working
        directory; None if one cannot be read, as nothing could verify it later,
        or is a pipe or a device: what the step wrote there is gone (a reader
        took it, /dev/null swallowed it), and replaying the step would write
        nothing for the next reader."""
        files = []
        with self.memo.batch():
            for path in self._output_files(result, invocation, cab):
                digest = self.memo.digest(path, stopping)
                if digest.startswith(("unreadable", "special")):
                    return None
                files.append((relative_path(path, bases), digest))
        return sorted(files)

    def store(
        self,
        key: str,
        result: StepResult,
        invocation: Invocation,
        cab: Cab | None = None,
        stopping: Stopping | None = None,
        limits: Limits | None = None,
    ) -> None:
        """Record a successful ``result``; a failure to write only loses the entry,
        and an output that cannot be read means nothing is recorded. Nor is
        anything when ``stopping`` says so while an output is being hashed:
        the step stays done, only not remembered. ``limits``: those its run
        applied, None if it did not apply what the step declares."""
        cwd = invocation.cwd
        bases = self._bases.get(cwd)
        if bases is None:
            bases = self._bases[cwd] = working_bases(cwd)
        try:
            files = self._recorded_files(result, invocation, cab, bases, stopping)
        except DigestStopped:
            return
        if files is None:
            return
        outputs, anchors = anchored_outputs(result.outputs, bases)
        globs = [
            [pattern, _harvested(pattern, cwd)]
            for pattern in sorted(
                {
                    relative_path(use.path, (cwd,))
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
            "argv": list(result.argv or invocation.argv),  # as shown: a secret masked
            "backend": result.backend,
            "image": invocation.image,
            "image_digest": result.details.get("image_digest"),
            "until_changed": result.details.get("until_changed"),
            LIMITS_FIELD: limits,
            "outputs": outputs,
            "anchored": anchors,
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
                make_dirs(path.parent)
                self._dirs.add(str(path.parent))
            data = json.dumps(entry, separators=(",", ":"), default=_json_default)
            write_atomically(path, data.encode())
            self.writes.stored(path, cwd, files)
        except OSError as exc:  # the step is done; only the entry is lost, but say so
            self._refused(
                exc, "cannot keep results", "steps run now will run again next time", "entries"
            )
            return
        except ValueError:  # an output JSON cannot hold
            return
        result.details["cache_key"] = key

    def forget(self, key: str) -> None:
        """Remove the entry stored under ``key``, if any: a result taken back after
        it was stored (see :mod:`shinobi.stop_window`). One that cannot be removed
        is warned about, since the next run would replay it."""
        try:
            os.unlink(self._entry_path(key))
        except FileNotFoundError:
            pass
        except OSError as exc:
            if self.on_refused is not None:
                self.on_refused(
                    f"the step cache entry {self._entry_path(key)} could not be removed"
                    f" ({exc.strerror or exc}): remove it, or the next run replays a"
                    " result this run did not trust",
                    "forget",
                )

    def _refused(self, exc: OSError, what: str, consequence: str, topic: str) -> None:
        """Say that the disk refused a write, its cause and the fix (once a run per
        ``topic``: every step meets the same full disk)."""
        if self.on_refused is not None:
            self.on_refused(
                f"the step cache at {self.root} {what} ({_refused_cause(exc)}); {consequence}:"
                f" {_refused_fix(exc)}",
                topic,
            )

    def close(self, settle: bool = False) -> None:
        """Persist the digest memo; called once at the end of a run. ``settle``: the
        run succeeded, so record the outputs later steps changed as it left them
        (:mod:`shinobi.cache_settle`)."""
        if settle:
            self.writes.settle(self.memo)
        self._save_memo()

    def _save_memo(self) -> None:
        """Persist the digest memo, saying so when the disk refuses: silently
        unsaved, every later run reads all its inputs again, "cached" or not."""
        try:
            self.memo.save()
        except OSError as exc:
            self._refused(
                exc,
                "cannot remember the files it has read",
                "every run will read them again to check its inputs, a cached one too",
                "memo",
            )

    # -- management (ninja cache) --------------------------------------------
    def entries(self) -> Iterator[CacheEntry]:
        """Every entry, in no particular order, those this ninja cannot use included
        (with their ``problem``): listing or removing must not trip over them."""
        base = self.root / "entries"
        self.unlisted = []
        try:  # a file there, or a folder this user may not list, is said by the caller
            shards = sorted(os.scandir(base), key=lambda e: e.name)
        except FileNotFoundError:
            return
        for shard in shards:
            if not shard.is_dir():
                continue
            try:  # glob() would pass over a folder it may not read, as if empty
                names = sorted(os.listdir(shard.path))
            except OSError:
                self.unlisted.append(shard.path)
                continue
            for name in names:
                # only what the cache names so (a key): a file of someone's there,
                # or under a cache dir given wrongly, is not an entry to prune
                if name.endswith(".json") and _is_key(name[: -len(".json")]):
                    yield read_entry(Path(shard.path, name))

    def is_stale(self, entry: CacheEntry) -> bool | None:
        """Whether ``entry`` can no longer hit where it was made or last used
        (:attr:`CacheEntry.place`): unusable, an output gone or changed, or a
        harvest glob that matches other files now. None when this user cannot
        tell: an output it may not read (a colleague's private project, in a
        cache a group shares) is no output gone."""
        if entry.foreign:
            return None
        if entry.problem is not None or entry.globs is None:
            return True
        cwd = entry.place
        with self.memo.batch():
            for rel, digest in entry.files:
                now = self.memo.digest(os.path.join(cwd, rel))
                if now == _NOT_MINE:
                    return None
                if now != digest:
                    return True
        return any(_harvested(pattern, cwd) != matched for pattern, matched in entry.globs)

    def remove(self, entry: CacheEntry, *, as_read: bool = False) -> bool:
        """Delete ``entry``'s file (gone already is fine); raises OSError otherwise.

        ``as_read``: only if the file is still as it was read, and say whether
        it was removed. ``prune`` judges every entry before it removes any
        (hashing outputs may take minutes), and a run may meanwhile store the
        same key afresh, or hit it: that entry is not the one judged.
        """
        with contextlib.suppress(FileNotFoundError):
            if as_read and entry.read_mtime and entry.path.stat().st_mtime != entry.read_mtime:
                return False
            entry.path.unlink()
        return True

    def leftovers(self, older_than: float = 3600.0) -> list[Path]:
        """Temporary files of writers that died before renaming them into place.

        Only where the cache writes them (an entry's shard, a host's memo),
        named as :func:`write_atomically` names them: whatever else lies under
        the cache directory is not the cache's to remove.
        """
        cutoff = time.time() - older_than
        found: list[Path] = []
        for path in (
            *self.root.glob(f"entries/*/{TEMP_PREFIX}*"),
            *self.root.glob(f"memo/*/{TEMP_PREFIX}*"),
            *self.root.glob("entries/*/.*.json.*.tmp"),  # as versions before 2026-12 named them
            *self.root.glob("memo/*/.*.json.*.tmp"),
        ):
            try:
                if path.stat().st_mtime < cutoff:
                    found.append(path)
            except OSError:
                continue
        return found
