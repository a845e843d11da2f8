"""Outputs a step did not rewrite: an earlier run's product, taken for this run's.

A tool that fails quietly (exits 0, writes nothing: a licence server down, a
flag it ignored) leaves the previous run's output where it was, and the
next step, the step cache and the provenance record would all take it for
this run's product. A file or directory a step is to write that exists
before the step runs is therefore noted (a file: inode, size, mtime, ctime;
a directory, such as a Measurement Set: the same of everything in it), and
if it is unchanged after the step exited 0, the step is warned about and its
result is not cached.

Only an output whose timestamps are clearly older than the step's start
counts: timestamps tick coarsely (a few milliseconds), and a file written
that close to the start cannot be told from one the step wrote. A
``harvest`` glob counts as one output, unchanged when the step rewrote
nothing it matched and made no new match. Not checked: a directory of more
than ``MAX_ENTRIES`` entries (walking it twice would cost more than the
check is worth), and paths the step rewrites in place (``mutable``, even
where an implicit output names them again): those are noted all the same
(marked ``rewritten``), for :mod:`shinobi.interrupted_outputs` to tell
whether a step that did not finish changed them, but a step that exits 0
and leaves one as it was did its job.

A step that runs elsewhere (a Slurm job) writes through a network
filesystem, which this host may answer a ``stat`` about from its attribute
cache, stale for up to a minute. Such a step's files are opened before they
are looked at again: an open revalidates the cached attributes (NFS's
close-to-open consistency; cluster filesystems are coherent anyway). Its
directories are not checked: every entry would need the same, and an
answer from the cache would warn of a product the job did write.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import NamedTuple

from shinobi.backends.base import PathUse
from shinobi.harvest import harvest

__all__ = [
    "MAX_ENTRIES",
    "Found",
    "Signature",
    "existing_outputs",
    "harvested_before",
    "predates",
    "product_paths",
    "rewritten_paths",
    "signature_of",
    "stamped_before",
    "untouched",
]

#: Seconds by which an unchanged file must predate the step to count as untouched.
_TICK = 0.05
#: Entries in a directory output beyond which it is not checked.
MAX_ENTRIES = 10_000

Signature = tuple[int, int, int, int]


def _signature(st: os.stat_result) -> Signature:
    """What tells one state of a file from another: inode, size, mtime, ctime."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _tree_signature(path: str, st: os.stat_result) -> Signature | None:
    """A directory's signature: its inode, a digest of every entry's signature
    (names included), and the newest mtime and ctime in it; None when it is too
    big to walk or cannot be read."""
    entries: list[tuple[str, Signature]] = []
    newest_mtime, newest_ctime = st.st_mtime_ns, st.st_ctime_ns
    pending = [path]
    while pending:
        try:
            with os.scandir(pending.pop()) as listing:
                found = list(listing)
            for entry in found:
                if len(entries) >= MAX_ENTRIES:
                    return None
                inner = entry.stat(follow_symlinks=False)
                entries.append((entry.path, _signature(inner)))
                newest_mtime = max(newest_mtime, inner.st_mtime_ns)
                newest_ctime = max(newest_ctime, inner.st_ctime_ns)
                if stat.S_ISDIR(inner.st_mode):
                    pending.append(entry.path)
        except OSError:
            return None
    # compared only within this process, so the built-in hash is a fit digest
    return (st.st_ino, hash(tuple(sorted(entries))), newest_mtime, newest_ctime)


def _with_link(path: str, signature: Signature | None) -> Signature | None:
    """``signature`` (of what ``path`` leads to) with the link itself, if ``path`` is one.

    A tool that exposes a data set under a new name re-creates the link and
    leaves its target as it was: the target alone would call that output
    untouched. A new link is a new inode and a new change time.
    """
    if signature is None:
        return None
    try:
        link = os.lstat(path)
    except OSError:
        return signature
    if not stat.S_ISLNK(link.st_mode):
        return signature
    own = (link.st_ino, link.st_mtime_ns, link.st_ctime_ns)
    return (
        signature[0],
        hash((signature[1], own)),
        max(signature[2], link.st_mtime_ns),
        max(signature[3], link.st_ctime_ns),
    )


def signature_of(path: str) -> Signature | None:
    """The signature of the file or directory at ``path`` now (None: neither, or gone)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode):
        return _with_link(path, _signature(st))
    if stat.S_ISDIR(st.st_mode):
        return _with_link(path, _tree_signature(path, st))
    return None


class Found(NamedTuple):
    """An output of a step as it was when the step started."""

    inode: int
    directory: bool
    #: None: a directory too big (or unreadable) to sign
    signature: Signature | None
    #: the ``harvest`` glob it matched, if that is how the step names it
    pattern: str | None = None
    #: an input the step rewrites in place (``mutable``), not one of its products
    rewritten: bool = False


def product_paths(
    uses: Iterable[PathUse], passed_through: Collection[str] = ()
) -> Iterator[tuple[str, str | None]]:
    """The paths that are the step's own products, as they are now.

    A path the step rewrites in place (``mutable``) is the user's, not the
    step's, even where an output names it again (an implicit output
    ``"{vis}"`` of a mutable ``vis``). Outputs of the fields in
    ``passed_through`` (passthroughs: the interrupt leaves those alone) are
    not products either. A ``harvest`` glob stands for what it matches now.
    Yields (path, the glob it matched or None).
    """
    uses = tuple(uses)
    skip = set(passed_through)
    theirs = {u.path for u in uses if u.mutable or (u.role == "output" and u.field in skip)}
    for use in uses:
        if use.role != "output" or use.mutable or use.field in skip:
            continue
        if not use.pattern:
            if use.path not in theirs:
                yield use.path, None
            continue
        yield from ((path, use.path) for path in harvest(use.path) if path not in theirs)


def rewritten_paths(uses: Iterable[PathUse]) -> Iterator[str]:
    """The paths the step rewrites in place (``mutable``), each once."""
    yield from dict.fromkeys(u.path for u in uses if u.mutable and not u.pattern)


def existing_outputs(uses: Iterable[PathUse], *, elsewhere: bool = False) -> dict[str, Found]:
    """The step's products (see :func:`product_paths`) that exist now, as they
    are, and the inputs it rewrites in place (:func:`rewritten_paths`), marked
    ``rewritten``.

    ``elsewhere``: the step runs on another host, and only its product files
    are noted (see the module docstring): what such a step rewrites in place
    is never looked at again, as nothing is after it fails or is stopped.
    """
    uses = tuple(uses)
    found: dict[str, Found] = {}
    noting = [(path, pattern, False) for path, pattern in product_paths(uses)]
    noting += [] if elsewhere else [(path, None, True) for path in rewritten_paths(uses)]
    for path, pattern, rewritten in noting:
        noted = _as_found(path, pattern, elsewhere, rewritten)
        if noted is not None:
            found[path] = noted
    return found


def _as_found(path: str, pattern: str | None, elsewhere: bool, rewritten: bool) -> Found | None:
    """``path`` as it is now; None: not there, neither a file nor a directory, or
    a directory of a step that runs elsewhere."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode) and not elsewhere:
        signature = _with_link(path, _tree_signature(path, st))
        return Found(st.st_ino, True, signature, pattern, rewritten)
    if stat.S_ISREG(st.st_mode):
        return Found(st.st_ino, False, _with_link(path, _signature(st)), pattern, rewritten)
    return None


def stamped_before(signature: Signature, started: float) -> bool:
    """Whether everything ``signature`` covers is clearly older than ``started``
    (the step's start): timestamps tick coarsely, so a file stamped within a
    tick of the start may be the step's own."""
    return max(signature[2], signature[3]) < (started - _TICK) * 1e9


def predates(st: os.stat_result, started: float) -> bool:
    """Whether what ``st`` describes was there, as it is, clearly before ``started``
    (see :func:`stamped_before`): a link the user made, not one the step did."""
    return stamped_before(_signature(st), started)


def untouched(before: dict[str, Found], started: float, *, elsewhere: bool = False) -> list[str]:
    """The outputs of ``before`` that are unchanged and older than ``started``.

    A ``harvest`` glob is reported (as the glob) only when the step wrote none
    of what it matches: an old match beside new ones (another step's file
    the glob also catches) is no sign of a tool that failed quietly.
    ``elsewhere``: the step ran on another host, and each file is opened
    first, so that what is looked at is not a cached answer.
    """
    stale: list[str] = []
    globs: dict[str, bool] = {}
    for path, found in before.items():
        if found.rewritten:  # the user's data: a step may leave it as it was
            continue
        unchanged = _as_before(path, found, started, elsewhere)
        if found.pattern is None:
            stale += [path] if unchanged else []
        else:
            globs[found.pattern] = globs.get(found.pattern, True) and unchanged
    for pattern, all_unchanged in globs.items():
        if all_unchanged and set(harvest(pattern)) <= before.keys():  # and nothing new
            stale.append(pattern)
    return stale


def _as_before(path: str, found: Found, started: float, elsewhere: bool) -> bool:
    """Whether ``path`` is as ``found`` saw it before the step, and older than the step."""
    if elsewhere:
        _revalidate(path)
    return (
        found.signature is not None
        and signature_of(path) == found.signature
        and stamped_before(found.signature, started)
    )


def harvested_before(
    before: dict[str, Found], started: float, *, elsewhere: bool = False
) -> Callable[[str], bool] | None:
    """Whether a path a harvest glob matches now was there, as it is, before the
    step started (another run's product); None when no glob matched anything then."""
    matched = {os.path.abspath(p): (p, f) for p, f in before.items() if f.pattern is not None}
    if not matched:
        return None

    def left_over(path: str) -> bool:
        known = matched.get(os.path.abspath(path))
        return known is not None and _as_before(*known, started, elsewhere)

    return left_over


def _revalidate(path: str) -> None:
    """Open and close ``path``, so a network filesystem's client asks the
    server for its attributes (the open of close-to-open consistency)."""
    with contextlib.suppress(OSError):  # gone or unreadable: the stat that follows says so
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
