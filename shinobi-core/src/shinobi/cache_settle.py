"""Entries whose outputs later steps of the same run changed, recorded as the run left them.

A step's entry records the digest of every output as the step left it, and a
hit requires that digest. In a radio pipeline a later step often changes an
earlier step's folder: a flagger rewrites the MS the previous step made, or an
imager writes its own product into a folder a step made (``{outdir}/img.fits``).
The earlier step then never hit again, and every re-run of an unchanged recipe
started from the top.

At the end of a run that succeeded, each entry stored in it is looked at again.
An output that changed since is recorded as it is now, when a step that ran
after it accounts for the change:

- a step that declares an output inside it (a new file in the folder): the
  folder without those files must still hold what the step stored;
- a step that rewrites it in place and is declared safe to replay
  (``Cab(cache=True)``), whose result is then cached too.

Any other change (a step rewriting it in place that is not declared safe to
replay, or nothing declared at all) leaves the entry as it was, so the earlier
step runs again and the later one starts from what it makes: replaying it over
data already rewritten would apply the rewrite twice.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from shinobi.file_digests import DigestStopped, write_atomically

if TYPE_CHECKING:
    from shinobi.backends.base import Invocation
    from shinobi.file_digests import DigestMemo
    from shinobi.graph import Graph

__all__ = ["IN_PLACE", "SETTLED", "RunWrites", "rewrites_unsafely"]

#: The entry field that says how it was settled, and its value for an output a
#: later step rewrote in place: replayed only in a run that rewrites nothing in
#: place unsafely (``StepCache.trust_settled``), since such a rewrite after the
#: replay would act on data rewritten already.
SETTLED = "settled"
IN_PLACE = "in-place"


@dataclass(frozen=True, slots=True)
class _Write:
    """A path a step that ran wrote: its own output, or an input rewritten in place."""

    order: int
    path: str
    in_place: bool
    replayable: bool


@dataclass(frozen=True, slots=True)
class _Stored:
    order: int
    entry: Path
    cwd: str
    #: the files the entry records, absolute: what a later write may have changed
    paths: tuple[str, ...]


@dataclass(slots=True)
class RunWrites:
    """What the steps of one run wrote, and the entries it stored, in order."""

    _order: itertools.count[int] = field(default_factory=itertools.count)
    _writes: list[_Write] = field(default_factory=list)
    _stored: list[_Stored] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def stored(self, entry: Path, cwd: str, files: list[tuple[str, str]]) -> None:
        """The run stored ``entry``, recording ``files`` (relative to ``cwd``)."""
        paths = tuple(os.path.normpath(os.path.join(cwd, rel)) for rel, _ in files)
        with self._lock:
            self._stored.append(_Stored(next(self._order), entry, cwd, paths))

    def ran(self, invocation: Invocation, replayable: bool) -> None:
        """A step ran, as ``invocation`` says, and succeeded (told before its own
        entry is stored); ``replayable``: its result may be replayed (stored), so a
        rewrite it makes in place is safe to replay too."""
        # a path both rewritten in place and declared an output is rewritten in place
        in_place: dict[str, bool] = {}
        for use in invocation.paths:
            if use.mutable or (use.role == "output" and not use.pattern):
                path = os.path.normpath(use.path)
                in_place[path] = in_place.get(path, False) or use.mutable
        if not in_place:
            return
        with self._lock:
            order = next(self._order)
            self._writes += [
                _Write(order, p, mutable, replayable) for p, mutable in in_place.items()
            ]

    def settle(self, memo: DigestMemo) -> None:
        """Record anew the outputs of each stored entry that later steps changed, where
        they account for the change (see the module docstring)."""
        with self._lock:
            stored, writes = list(self._stored), list(self._writes)
        if not writes:
            return
        # when each path was last written, and each folder last written inside: one
        # pass, so that an entry no later step touched costs a few dict look-ups
        # (looking through every later write for each entry grew with the square
        # of a scatter's slices: 17 s at the end of a 20,000-slice run)
        last_at: dict[str, int] = {}
        last_inside: dict[str, int] = {}
        for write in writes:
            last_at[write.path] = max(last_at.get(write.path, -1), write.order)
            for folder in _folders_above(write.path):
                last_inside[folder] = max(last_inside.get(folder, -1), write.order)
        with contextlib.suppress(DigestStopped), memo.batch():
            for entry in stored:
                touched = [
                    p for p in entry.paths if _last_touch(p, last_at, last_inside) > entry.order
                ]
                if touched:
                    later = [
                        w
                        for w in writes
                        if w.order > entry.order
                        and any(_within(w.path, p) or _within(p, w.path) for p in touched)
                    ]
                    _settle_entry(entry, later, memo)


def _settle_entry(entry: _Stored, later: list[_Write], memo: DigestMemo) -> None:
    try:
        data = json.loads(entry.entry.read_bytes())
        files = data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # gone, or rewritten by another run meanwhile: not this run's to settle
    settled: list[list[str]] = []
    how: set[str] = set()
    for rel, digest in files:
        path = os.path.normpath(os.path.join(entry.cwd, rel))
        now = memo.digest(path)
        if now != digest:
            accounted = _accounted(path, digest, later, memo)
            if accounted is None:
                return
            how.add(accounted)
        settled.append([rel, now])
    if settled != [list(f) for f in files]:
        data["files"] = settled
        if IN_PLACE in how:
            data[SETTLED] = IN_PLACE
        with contextlib.suppress(OSError):
            write_atomically(entry.entry, json.dumps(data, separators=(",", ":")).encode())


def _accounted(path: str, digest: str, later: list[_Write], memo: DigestMemo) -> str | None:
    """How the steps that ran later account for ``path``'s change from ``digest``:
    :data:`IN_PLACE`, ``"inside"`` (files of their own in it), or None: they do not."""
    touching = [w for w in later if _within(w.path, path) or _within(path, w.path)]
    if not touching or any(w.in_place and not w.replayable for w in touching):
        return None
    if any(w.in_place and _within(path, w.path) for w in touching):
        return IN_PLACE  # rewritten in place by a step safe to replay
    if not digest.startswith("dir:") or any(w.path == path for w in touching):
        # made anew by a later step (a second producer): its readers in between
        # read what this step made, which a replay would not hand them
        return None
    if any(not _within(w.path, path) for w in touching):
        return None  # inside a folder a later step makes whole
    # files of their own inside it: without them it must be as it was stored
    leave_out = tuple(w.path for w in touching)
    if memo.digest(path, leave_out=leave_out) != digest:
        return None
    return IN_PLACE if any(w.in_place for w in touching) else "inside"


def rewrites_unsafely(graph: Graph) -> bool:
    """Whether a step of ``graph`` rewrites an input in place and is not declared
    safe to replay (``Cab(cache=True)``): a run of it must not replay an entry
    settled as an in-place rewrite left it."""
    from shinobi.plan import cab_of

    cabs = (cab_of(node.step) for _, node in graph.every_node())
    return any(
        cab is not None
        and cab.cache is not True
        and any(meta.mutable for meta in cab.field_meta.values())
        for cab in cabs
    )


def _folders_above(path: str) -> list[str]:
    """Every folder ``path`` lies in, nearest first."""
    found = []
    parent = os.path.dirname(path)
    while parent and parent != path:
        found.append(parent)
        path, parent = parent, os.path.dirname(parent)
    return found


def _last_touch(path: str, last_at: dict[str, int], last_inside: dict[str, int]) -> int:
    """When a write last touched ``path``: made it, wrote inside it, or rewrote a
    folder it lies in (-1: never)."""
    touched = max(last_at.get(path, -1), last_inside.get(path, -1))
    for folder in _folders_above(path):
        touched = max(touched, last_at.get(folder, -1))
    return touched


def _within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")
