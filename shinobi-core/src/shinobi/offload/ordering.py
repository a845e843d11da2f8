"""Ordering edges that in-place mutation needs and wiring does not show.

Self-calibration rewrites one Measurement Set in place, step after step, and
nothing wires those steps together: a cluster would start them all at once,
as would a local run with several workers (which keeps the same order: see
:mod:`shinobi.step_turns`). So every path a job touches is
canonicalised (``Path.resolve()`` semantics, on this host) and two jobs that
touch the same path -- or one a path inside the other's, since an MS is a
directory -- are ordered when at least one of them writes it:

* mutate-then-mutate: the later writer waits for the earlier one;
* mutate-then-read: a reader waits for the writer before it;
* read-then-mutate: a writer waits for every reader of the old contents.

Readers between two writes stay parallel, and so do writers of two files
side by side in a folder (a reader of the folder waits for both). A job
"writes" a path it declares MUTABLE or produces as an output (unless it
promised ``writable=False``); everything else is a read. A harvest glob
writes the files it matches in its folder, not the folder. Between the
slices of one scatter, an input folder that holds the slice's own outputs
(an imager's ``outdir``, its image ``{outdir}/{ms.stem}-image.fits``) is
where it puts them, not a read of the folder (see :func:`step_uses`):
imaging N sets into one folder stays parallel. Between different steps it
stays a read, since nothing tells an output folder from one a step also
reads whole (a mosaic given ``imgs`` that writes ``imgs/mosaic.fits``).
"Before" is the order the local scheduler would use, so the
derived edges never form a cycle with the wired ones.

Paths are grouped under their outermost used ancestor, and within a group
each access is compared with the paths it overlaps (its own, those above it,
those inside it), not with every other: linear in the path uses times path
depth, plus the paths inside a folder for a step that uses the folder whole.
"""

from __future__ import annotations

import fnmatch
import os
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from shinobi.backends.base import PathUse
from shinobi.offload.jobs import Edge, EdgeKind, Job, JobGraph

__all__ = [
    "Canonicaliser",
    "SharedPath",
    "Turn",
    "derive_edges",
    "path_turns",
    "produces",
    "same_product",
    "shared_rewritten",
    "step_uses",
    "writes",
]

_GLOB = set("*?[")


#: A directory is listed once this many of its paths were looked up, then
#: again each time that number grows eightfold (see :class:`Canonicaliser`).
_LIST_FROM = 64


class Canonicaliser:
    """``Path.resolve()`` for many paths, resolving each parent directory only once.

    Whether a path is itself a symbolic link still takes an ``lstat`` per
    path: a 10,000-step compile spent 6 % of its time there, nearly all of it
    on the same few directories. So a directory many paths sit in is listed
    instead, and its links looked up in the listing. A listing may read at
    most four entries per lookup made so far, so a huge directory (a data
    area) costs at most a fraction more than the ``lstat`` calls it replaces.
    A name that matches a link only once case and Unicode forms are folded
    still gets its ``lstat``: on a case-insensitive filesystem it is that link.
    """

    def __init__(self) -> None:
        self._paths: dict[str, str] = {}  # a job's output is the next one's input
        self._dirs: dict[str, str] = {}
        self._links: dict[str, frozenset[str]] = {}
        self._asked: dict[str, int] = {}
        self._list_at: dict[str, int] = {}
        #: The canonical form of a path already resolved, else None: one dict
        #: lookup, without a method call, for the paths a compile meets again.
        self.known: Callable[[str], str | None] = self._paths.get

    def __call__(self, path: str) -> str:
        known = self._paths.get(path)
        if known is None:
            known = self._paths[path] = self._resolve(path)
        return known

    def _resolve(self, path: str) -> str:
        if "/.." in path or path.startswith(".."):
            # `link/..` is the link target's parent, not the link's: normpath
            # would drop both, so only the kernel may say where it leads
            return os.path.realpath(path)
        parent, base = _split(path)
        resolved = self._dirs.get(parent)
        if resolved is None:
            resolved = os.path.realpath(parent)
            self._dirs[parent] = resolved
        if not base:
            return resolved
        # os.path.join's answer: ``base`` is one name, ``resolved`` no empty string
        full = resolved + base if resolved.endswith("/") else f"{resolved}/{base}"
        if self._is_link(resolved, base, full):
            full = os.path.realpath(full)
        return full

    def _is_link(self, directory: str, name: str, full: str) -> bool:
        links = self._links.get(directory)
        if links is None:
            asked = self._asked[directory] = self._asked.get(directory, 0) + 1
            if asked != self._list_at.get(directory, _LIST_FROM):
                return os.path.islink(full)
            links = _links_in(directory, budget=4 * asked)
            if links is None:  # too large for now: try again later
                self._list_at[directory] = 8 * asked
                return os.path.islink(full)
            self._links[directory] = links
        return _folded(name) in links and os.path.islink(full)


def _split(path: str) -> tuple[str, str]:
    """``os.path.split(os.path.normpath(path))``, without either call for the
    usual path: absolute, already normal, not at the root (a planned step's
    paths are joined to the cwd and normalised). Runs for every distinct path
    of a compile."""
    if path[:1] == "/" and "//" not in path and "/." not in path and path[-1] != "/":
        parent, _, base = path.rpartition("/")
        if parent:
            return parent, base
    return os.path.split(os.path.normpath(path))


def _folded(name: str) -> str:
    """``name`` with case and Unicode forms folded, as the loosest filesystem compares."""
    return name.lower() if name.isascii() else unicodedata.normalize("NFKC", name).casefold()


def _links_in(directory: str, budget: int) -> frozenset[str] | None:
    """The folded names of the symbolic links in ``directory``; None past ``budget`` entries."""
    links = []
    try:
        with os.scandir(directory) as entries:
            for count, entry in enumerate(entries):
                if count >= budget:
                    return None
                if entry.is_symlink():
                    links.append(_folded(entry.name))
    except OSError:
        return None
    return frozenset(links)


def _concrete(use: PathUse) -> str:
    """The path a use touches; for a harvest glob, the directory it writes into."""
    if not use.pattern:
        return use.path
    parts = use.path.split(os.sep)
    for i, part in enumerate(parts):
        if _GLOB & set(part):
            return os.sep.join(parts[:i]) or os.sep
    return os.path.dirname(use.path)


def writes(use: PathUse) -> bool:
    """Whether a use may change what is at its path."""
    return use.mutable or (use.role == "output" and use.writable)


def step_uses(uses: Iterable[PathUse]) -> list[PathUse]:
    """One slice's paths as a scatter's slices are compared: without the input
    folders it only puts its own outputs in.

    An imager given ``outdir`` and writing ``{outdir}/{ms.stem}-image.fits``
    does not read the folder's contents, and counting it as a reader would
    run a scatter's slices, each making its own file there, one at a time:
    imaging N sets into one folder would be N times slower. Its output still
    orders it with a writer of the same file, and an input changed in place
    stays (a write). Between different steps the folder stays a read (see the
    module's docstring): a step that reads a folder whole and writes into it
    looks just the same.

    Give it one step's paths: a nested recipe's steps each on their own, as
    one step's folder may be what another step of it reads whole.
    """
    uses = list(uses)
    inputs = {_spelt(u.path) for u in uses if u.role == "input" and not u.mutable}
    held = _holding(uses, inputs) if inputs else inputs
    if not held:
        return uses
    return [u for u in uses if not (u.role == "input" and not u.mutable and _spelt(u.path) in held)]


def _holding(uses: Sequence[PathUse], inputs: set[str]) -> set[str]:
    """Those of ``inputs`` that hold one of ``uses``' outputs (a harvest glob's
    own folder too: it makes files there).

    Each output's folders are walked up only while one of ``inputs`` could be
    that long, and a folder once: most steps' inputs hold nothing, and this
    runs for each of a 10,000-step compile's jobs.
    """
    shortest = min(map(len, inputs))
    held: set[str] = set()
    seen: set[str] = set()
    for use in uses:
        if use.role != "output" or use.mutable:
            continue
        folder = _spelt(_concrete(use)) if use.pattern else _spelt(use.path).rpartition(os.sep)[0]
        while len(folder) >= shortest and folder not in seen:  # "/x" ends at "": stops
            seen.add(folder)
            if folder in inputs:
                held.add(folder)
            folder = folder.rpartition(os.sep)[0]
    return held


def _spelt(path: str) -> str:
    """``path`` as compared for holding: normalised, no trailing separator.

    The spelling, not the canonical path: an output templated from its folder
    (``{outdir}/...``) starts with the folder's own spelling. A folder spelt
    otherwise stays a read, the careful side.
    """
    if "//" in path or "/." in path or path.endswith(os.sep):
        return os.path.normpath(path)
    return path


@dataclass(slots=True)
class _Access:
    job: int
    path: str
    write: bool
    #: A harvest glob (absolute, its folder canonical): it makes the files that
    #: match in ``path``, its folder, and leaves the rest of the folder alone.
    glob: str | None = None


class _Outermost:
    """The outermost ancestor of a path (itself included) that some job uses.

    Answered per directory and remembered, so a path costs one ``dirname``
    however deep it sits: 10,000 jobs in one directory share its answer.
    """

    def __init__(self, used: set[str]) -> None:
        self._used = used
        self._dirs: dict[str, str | None] = {}

    def __call__(self, path: str) -> str:
        return self._of_dir(os.path.dirname(path)) or path

    def _of_dir(self, directory: str) -> str | None:
        unknown: list[str] = []  # from ``directory`` up to the first one answered
        outer: str | None = None
        current = directory
        while True:
            if current in self._dirs:
                outer = self._dirs[current]
                break
            unknown.append(current)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for known in reversed(unknown):  # outermost first: a used ancestor wins
            if outer is None and known in self._used:
                outer = known
            self._dirs[known] = outer
        return outer


def _detail(before: _Access, after: _Access) -> str:
    if before.path == after.path:
        return before.path
    outer, inner = sorted((before.path, after.path), key=len)
    return f"{inner} (inside {outer})"


def _touched(uses: Iterable[PathUse], canonical: Canonicaliser) -> dict[str, bool]:
    """Each canonical path ``uses`` touch, with whether any of them may change it."""
    touched: dict[str, bool] = {}
    for use in uses:
        path = canonical(_concrete(use))
        touched[path] = touched.get(path, False) or writes(use)
    return touched


def _accesses(job: int, uses: Iterable[PathUse], canonical: Canonicaliser) -> list[_Access]:
    """A job's accesses: one per canonical path it touches (a write if any use of
    it may change it), and one per harvest glob, after them. One pass over the
    uses: this runs for every job of a compile."""
    touched: dict[str, bool] = {}
    globs: dict[str, _Access] = {}
    known = canonical.known  # a path met before (a job's input, the last one's output)
    for use in uses:
        if use.pattern:  # the glob, anchored at its folder's canonical spelling
            folder = _concrete(use)
            path = canonical(folder)
            glob = path.rstrip(os.sep) + use.path[len(folder) :]
            globs.setdefault(glob, _Access(job, path, writes(use), glob))
        else:
            path = known(use.path) or canonical(use.path)
            if not touched.get(path):  # unseen, or only read so far
                touched[path] = writes(use)
    accesses = [_Access(job, path, write) for path, write in touched.items()]
    if globs:
        accesses += globs.values()
    return accesses


def _shared_groups(
    per_job: Sequence[Iterable[PathUse]], canonical: Canonicaliser
) -> Iterator[tuple[str, list[_Access]]]:
    """Each outermost used path that more than one job uses and one writes, with
    every access to it or to a path inside it, in job order."""
    by_job = [_accesses(index, uses, canonical) for index, uses in enumerate(per_job)]
    used = {access.path for accesses in by_job for access in accesses}
    outermost = _Outermost(used)
    root_of = {path: outermost(path) for path in used}  # once per path, not per access
    groups: dict[str, list[_Access]] = {}
    for accesses in by_job:
        for access in accesses:
            root = root_of[access.path]
            group = groups.get(root)
            if group is None:
                groups[root] = [access]
            else:
                group.append(access)
    for root, accesses in groups.items():
        # in job order: more than one job when the first and the last differ
        if accesses[0].job != accesses[-1].job and any(a.write for a in accesses):
            yield root, accesses


@dataclass(frozen=True, slots=True)
class Turn:
    """A step that must wait for another, for a path they share and one writes."""

    before: int
    after: int
    kind: EdgeKind
    #: The earlier step's path: the shared one, or one holding or inside the later's.
    path: str
    #: Both produce this very output: the later replaces the earlier's product.
    same_output: bool


def path_turns(per_step: Sequence[Iterable[PathUse]]) -> list[Turn]:
    """The order a local run with several workers keeps among steps sharing a path.

    ``per_step``: each step's paths, each planned step's as :func:`step_uses`
    gives them, the steps listed in the order the local scheduler starts them
    at one worker. The rules are those that order the
    jobs of a compiled run (see the module docstring), so a recipe gives the
    same data locally and on a cluster.
    """
    steps = [list(uses) for uses in per_step]
    turns: list[Turn] = []

    def link(before: _Access, after: _Access, kind: EdgeKind) -> None:
        same = kind == "mutate-then-mutate" and bool(
            {u.path for u in steps[before.job] if produces(u)}
            & {u.path for u in steps[after.job] if produces(u)}
        )
        turns.append(Turn(before.job, after.job, kind, before.path, same))

    for root, accesses in _shared_groups(steps, Canonicaliser()):
        _order(root, accesses, link, lambda path, readers: None)
    return turns


def produces(use: PathUse) -> bool:
    """Whether a use makes its path anew (an output), rather than changing it in place."""
    return use.role == "output" and not use.mutable and not use.pattern


def derive_edges(graph: JobGraph) -> int:
    """Add the mutation-ordering edges to ``graph``'s jobs; returns how many were added."""
    added = 0

    def link(before: _Access, after: _Access, kind: EdgeKind) -> None:
        nonlocal added
        job = graph.jobs[after.job]
        if job.waits_for(before.job):
            return
        job.edges.append(Edge(before.job, kind, _detail(before, after)))
        added += 1

    canonical = Canonicaliser()
    readers_here: list[_Access] = []  # every reader of the group being ordered

    def note_readers(path: str, readers: list[_Access]) -> None:
        readers_here.extend(readers)
        if len(readers) > 1:  # most paths: nothing to say, and no walk of the edges
            _note_parallel(graph, path, [r.job for r in readers])

    # between jobs, each job's paths whole (see step_uses: only slices of one scatter
    # compare without the folders they put their outputs in)
    for root, accesses in _shared_groups([job.paths for job in graph.jobs], canonical):
        readers_here.clear()
        said = len(graph.parallel_readers)
        _order(root, accesses, link, note_readers)
        if (
            len(graph.parallel_readers) == said
            and len(readers_here) > 1
            and len({r.job for r in readers_here}) > 1
        ):
            # readers of an MS and of a table in it, each alone on its own path
            _note_parallel(graph, f"{root} (or paths in it)", [r.job for r in readers_here])
    for job in graph.jobs:
        if job.scattered and len(job.invocations) > 1:
            _serialise_slices(job, canonical)
    return added


def _note_parallel(graph: JobGraph, what: str, readers: list[int]) -> None:
    """Say which of the jobs ``readers``, which only read ``what``, nothing orders."""
    unordered = _unordered(graph, readers)
    if len(unordered) > 1:
        names = ", ".join(graph.jobs[j].name for j in unordered[:4])
        if len(unordered) > 4:
            names += f" and {len(unordered) - 4} more"
        graph.parallel_readers.append(f"{names} only read {what}: left parallel")


def _serialise_slices(job: Job, canonical: Canonicaliser) -> None:
    """Run a scatter's slices one at a time when they share a path one of them rewrites.

    Edges order jobs; the slices of one job are tasks of one array, which start
    together unless the array is throttled. ``ninja run`` runs such slices one
    at a time too, and the compiled job must never be less careful.
    """
    per_slice = [step_uses(invocation.paths) for invocation in job.invocations]
    shared = shared_rewritten(per_slice, canonical)
    if shared is not None:
        job.serial = shared.path
        job.notes.append(shared.note())


@dataclass(frozen=True, slots=True)
class SharedPath:
    """A path more than one slice of a scatter uses and at least one rewrites."""

    #: The path, or the outermost used directory holding it.
    path: str
    #: An output two slices both produce, and those slices' numbers: each run
    #: replaces the other's product, whatever the order.
    clash: tuple[str, int, int] | None = None

    def note(self) -> str:
        """What this means for the slices, said of the step."""
        if self.clash is None:
            return (
                f"its slices run one at a time: more than one uses {self.path}, which one rewrites"
            )
        path, first, second = self.clash
        return (
            f"slices [{first}] and [{second}] both write {path}, so one replaces the other's"
            " product; give each slice its own output path (scatter a prefix, or name the"
            " output after the scattered input). Its slices run one at a time"
        )


def shared_rewritten(
    per_slice: Sequence[Iterable[PathUse]], canonical: Canonicaliser | None = None
) -> SharedPath | None:
    """The path that makes a scatter's slices take turns, or None: they may overlap.

    ``per_slice``: each slice's paths, each planned step's as :func:`step_uses`
    gives them (a slice of a nested recipe holds several steps).
    """
    canonical = canonical or Canonicaliser()
    uses = [list(slice_uses) for slice_uses in per_slice]
    # a harvest glob writes files into its directory, not the directory itself:
    # slices harvesting a-*.fits and b-*.fits there do not rewrite a shared path
    touched = [_touched([u for u in slice_uses if not u.pattern], canonical) for slice_uses in uses]
    outermost = _Outermost(set().union(*touched))
    slices: dict[str, set[int]] = {}
    written: set[str] = set()
    for index, paths in enumerate(touched):
        for path, write in paths.items():
            root = outermost(path)
            slices.setdefault(root, set()).add(index)
            if write:
                written.add(root)
    shared = next((root for root in sorted(written) if len(slices[root]) > 1), None)
    if shared is None:
        return None
    return SharedPath(shared, same_product(uses))


def same_product(uses: Sequence[Sequence[PathUse]]) -> tuple[str, int, int] | None:
    """The first output path two slices both produce (not rewrite in place)."""
    seen: dict[str, int] = {}
    for index, slice_uses in enumerate(uses):
        for use in slice_uses:
            if not produces(use):
                continue
            first = seen.setdefault(use.path, index)
            if first != index:
                return use.path, first, index
    return None


#: How many readers of one path ``--explain`` checks for an order among them.
_READERS_CHECKED = 8


def _unordered(graph: JobGraph, jobs: list[int]) -> list[int]:
    """Those of ``jobs`` (the first few) that no other of them waits for, nor waits for.

    Readers of a path that something else already orders (the iterations of a
    loop, a chain) are not "left parallel". Jobs are listed dependencies first,
    so a path from one job to a later one only passes through the jobs between.
    """
    checked = sorted(set(jobs))[:_READERS_CHECKED]
    ordered: set[int] = set()
    for i, early in enumerate(checked):
        for late in checked[i + 1 :]:
            if _waits_on(graph, late, early):
                ordered.update((early, late))
    return [job for job in checked if job not in ordered]


def _waits_on(graph: JobGraph, late: int, early: int) -> bool:
    """Whether job ``late`` waits, through any chain of edges, for job ``early``."""
    seen: set[int] = set()
    todo = [late]
    while todo:
        for edge in graph.jobs[todo.pop()].edges:
            before = edge.before
            if before == early:
                return True
            if before > early and before not in seen:
                seen.add(before)
                todo.append(before)
    return False


def _order(
    root: str,
    accesses: list[_Access],
    link: Callable[[_Access, _Access, EdgeKind], None],
    note_readers: Callable[[str, list[_Access]], None],
) -> None:
    """Link the accesses of one group: :func:`_sequence`, or its short form when
    every access is to the group's path itself and none is a glob."""
    if all(a.path == root and a.glob is None for a in accesses):
        _sequence_one_path(root, accesses, link, note_readers)
    else:
        _sequence(root, accesses, link, note_readers)


def _sequence(
    root: str,
    accesses: list[_Access],
    link: Callable[[_Access, _Access, EdgeKind], None],
    note_readers: Callable[[str, list[_Access]], None],
) -> None:
    """Walk the accesses under ``root`` in job order, linking each to what it must wait for.

    Only accesses whose paths overlap are ordered: the same path, or one inside
    the other (an MS and a table in it). Writers of two files side by side in a
    folder stay parallel; a reader of the folder waits for both. A writer waits
    for the readers of what it changes since the last write (or for that
    write), a reader for the last write. A harvest glob writes the files it
    matches, not its folder: it is ordered with those files, with readers and
    writers of the folder as a whole, and not with other globs there.
    ``note_readers`` hears, per path, every run of readers between two writes.
    """
    last_write: dict[str, _Access] = {}
    readers: dict[str, list[_Access]] = {}
    # a used path -> the used paths within it, in the order they were first used:
    # a set's order follows string hashing, which changes from one process to
    # the next, and the first overlap linked names the edge --explain shows
    inside: dict[str, dict[str, None]] = {}
    globs: dict[str, list[_Access]] = {}  # a folder -> the globs that write into it
    floor = len(root)

    def above(path: str) -> list[str]:
        found = []
        while len(path) > floor:
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
            found.append(path)
        return found

    def matched(path: str, glob: _Access) -> bool:
        """Whether ``path`` is, or lies in, a file ``glob`` makes."""
        assert glob.glob is not None
        return any(
            fnmatch.fnmatchcase(p, glob.glob)
            for p in [path, *above(path)]
            if len(p) > len(glob.path)
        )

    def after_write(before: _Access, access: _Access) -> None:
        if before.job != access.job:
            kind: EdgeKind = "mutate-then-mutate" if access.write else "mutate-then-read"
            link(before, access, kind)

    def after_state(other: str, access: _Access) -> None:
        """Order ``access`` after what was last done to ``other``, a path it overlaps."""
        waiting = [r for r in readers[other] if r.job != access.job] if access.write else []
        for reader in waiting:
            link(reader, access, "read-then-mutate")
        before = last_write.get(other)
        if before is not None and not waiting:
            after_write(before, access)

    for access in accesses:
        path = access.path
        ancestors = above(path)
        if path not in readers:
            readers[path] = []
            for parent in ancestors:
                inside.setdefault(parent, {})[path] = None
        used_above = [p for p in ancestors if p in readers]
        if access.glob is not None:  # the folder's own state, and the files it makes
            for other in [path, *used_above]:
                after_state(other, access)
            for other in inside.get(path, ()):
                if matched(other, access):
                    after_state(other, access)
            globs.setdefault(path, []).append(access)
            continue
        overlapping = [path, *used_above, *inside.get(path, ())]
        for other in overlapping:
            after_state(other, access)
        for folder in [path, *inside.get(path, ())]:  # globs writing in this folder or below
            for glob in globs.get(folder, ()):
                after_write(glob, access)
        for folder in ancestors:  # globs above that make this very file
            for glob in globs.get(folder, ()):
                if matched(path, glob):
                    after_write(glob, access)
        if access.write:
            note_readers(path, readers[path])
            last_write[path], readers[path] = access, []
        else:
            readers[path].append(access)
    for path, waiting in readers.items():
        note_readers(path, waiting)


def _sequence_one_path(
    path: str,
    accesses: list[_Access],
    link: Callable[[_Access, _Access, EdgeKind], None],
    note_readers: Callable[[str, list[_Access]], None],
) -> None:
    """What :func:`_sequence` does where every access is to the same path and
    none is a glob.

    The usual group (a file one step writes and the next reads) takes this
    way: nothing lies above or inside the path, so the general walk's folder
    bookkeeping would only cost its time, about a fifth of a large compile's
    ordering.
    """
    last_write: _Access | None = None
    readers: list[_Access] = []
    for access in accesses:
        if access.write:
            waiting = [r for r in readers if r.job != access.job]
            for reader in waiting:
                link(reader, access, "read-then-mutate")
            if last_write is not None and not waiting and last_write.job != access.job:
                link(last_write, access, "mutate-then-mutate")
            note_readers(path, readers)
            last_write, readers = access, []
        else:
            if last_write is not None and last_write.job != access.job:
                link(last_write, access, "mutate-then-read")
            readers.append(access)
    note_readers(path, readers)
