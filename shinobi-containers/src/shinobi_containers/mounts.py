"""Bind mounts for one step, derived from the paths its cab declares.

Every container engine gets the same answer from here; only the spelling of a
mount on the command line differs per engine. The rules, in order:

* every input makes its parent directory visible (a directory input - kind
  ``dir``, e.g. a Measurement Set - makes itself visible); outputs and
  harvest patterns make the directory they write into visible read-write;
  the step's working directory is visible read-write too;
* a directory that does not exist yet contributes its nearest existing
  ancestor, so a tool that creates its own output tree behaves as it would
  natively; an input counts the same (a ``Directory`` input the tool makes
  with ``mkdir -p``, or one an earlier step makes), so a dry run plans what
  the run mounts, and a wrong path is the tool's to report, as natively; a
  path whose only existing ancestor is ``/`` is refused, since the container
  would write it somewhere the host never sees;
* an input marked ``writable: false`` is mounted read-only; when its directory
  ends up read-write anyway (an output or another input lives there), the
  input is re-mounted read-only at its own path, so both promises hold;
  declaring a write inside a ``writable: false`` input is refused;
* mounts are identity mounts (host path == container path) of the real,
  symlink-resolved directory; a path reached through symlinks is mounted at
  each name it takes on the way (every link followed, in its parent
  directories too, hop after hop) when nothing else makes that name resolve;
* no mount covers a directory the image keeps its own software or settings in
  (/usr/bin, /usr/lib, /etc, /opt, ...: :data:`IMAGE_TREES`), nor lies in one of
  its programs, libraries or settings (:data:`PROGRAM_TREES`), since the host's
  would replace the image's programs and libraries: a path whose mount would
  be one, and a working directory that is one, are refused;
* nothing under /proc, /sys or /dev (but /dev/shm) is mounted: such a path is
  refused, since the host's kernel filesystem would be laid read-write over
  the container's own; a device every container has itself (/dev/null,
  /dev/stdout, ...) needs no mount and gets none;
* the set is collapsed to the fewest mounts that cover it: a mount inside
  another is dropped, unless it is a read-write one inside a read-only one.

Only :func:`plan_mounts` touches the filesystem, through a :class:`HostView`
(``exists`` and ``realpath``), so the rules are testable without a host.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from shinobi.backends.base import PathUse
from shinobi_containers.errors import MountRefused

__all__ = [
    "CONTAINER_DEVICES",
    "DATA_TREES",
    "IMAGE_TREES",
    "LOCAL_HOST",
    "PROGRAM_TREES",
    "ROOT_PROGRAM_TREES",
    "HostView",
    "LocalHost",
    "Mount",
    "MountRefused",
    "covers",
    "mount_option",
    "needed_directory",
    "plan_mounts",
    "unquotable_path",
]

_GLOB = frozenset("*?[")
#: Symlink hops followed for their directories, as the kernel's own limit (ELOOP).
_MAX_HOPS = 40
#: The kernel's own filesystems, and what the host's would expose in a container.
_KERNEL_TREES = {"/proc": "processes", "/sys": "kernel settings", "/dev": "devices"}
#: The directories at the root that hold programs and libraries (or link to /usr's).
ROOT_PROGRAM_TREES = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Directories an image fills with its own programs, libraries and settings: no
#: mount may be at one, above one (/usr) or inside one (/etc/alternatives,
#: /usr/lib/x86_64-linux-gnu). The host's would replace the image's: the step
#: would run the host's programs with the image's libraries, or fail to start at
#: all ("a shared library is likely missing"), or find the host's alternatives.
PROGRAM_TREES = frozenset(
    {
        *ROOT_PROGRAM_TREES,
        "/usr/bin",
        "/usr/sbin",
        "/usr/lib",
        "/usr/lib32",
        "/usr/lib64",
        "/usr/libx32",
        "/usr/libexec",
        "/usr/include",
        "/usr/local/bin",
        "/usr/local/sbin",
        "/usr/local/lib",
        "/usr/local/lib64",
        "/usr/local/libexec",
        "/usr/local/include",
        "/usr/local/etc",
        "/etc",
    }
)
#: Directories an image keeps its own data and installed trees in: no mount may be
#: at one or above one, but a directory inside (/usr/share/casacore/data,
#: /opt/data) is mounted as any other.
DATA_TREES = frozenset({"/usr/share", "/usr/local/share", "/opt", "/var/lib", "/nix", "/gnu"})
IMAGE_TREES = PROGRAM_TREES | DATA_TREES
_IMAGE_TREES_IN_ORDER = tuple(sorted(IMAGE_TREES))
_PROGRAM_TREES_IN_ORDER = tuple(sorted(PROGRAM_TREES))
#: The part of /dev a host may share with a container: memory-backed files.
_SHARED_MEMORY = "/dev/shm"
#: Devices every container has of its own, the same as the host's: no mount needed.
CONTAINER_DEVICES = frozenset(
    {
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
        "/dev/tty",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
    }
)


@dataclass(frozen=True, slots=True)
class Mount:
    """One bind mount: ``source`` on the host appears at ``target`` in the container."""

    source: str
    target: str
    readonly: bool = False


class HostView(Protocol):
    """What :func:`plan_mounts` needs to know about the host's filesystem."""

    def exists(self, path: str) -> bool: ...

    def realpath(self, path: str) -> str: ...

    def readlink(self, path: str) -> str | None:
        """The target of the symlink ``path``, absolute; None if it is no symlink."""
        ...


class LocalHost:
    """This machine's filesystem."""

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def readlink(self, path: str) -> str | None:
        try:
            target = os.readlink(path)
        except OSError:
            return None
        return os.path.join(os.path.dirname(path), target)

    def isfile(self, path: str) -> bool:
        return os.path.isfile(path)

    def head(self, path: str, size: int) -> bytes | None:
        try:
            with open(path, "rb") as stream:
                return stream.read(size)
        except OSError:
            return None


LOCAL_HOST = LocalHost()


def covers(outer: str, inner: str) -> bool:
    """Whether ``inner`` is ``outer`` or lies beneath it (both normalised, absolute)."""
    if outer == "/":
        return True
    return inner == outer or inner.startswith(outer + "/")


def _pattern_directory(pattern: str) -> str:
    """The directory a harvest glob writes into: its components before the first glob."""
    parts = pattern.split("/")
    kept: list[str] = []
    for part in parts[:-1]:
        if _GLOB.intersection(part):
            break
        kept.append(part)
    return "/".join(kept) or "/"


def needed_directory(use: PathUse) -> str:
    """The directory ``use`` needs visible: the path itself for a directory input,
    the directory a harvest pattern writes into, and otherwise the parent."""
    if use.pattern:
        return _pattern_directory(use.path)
    if use.role == "input" and use.kind == "dir":
        return use.path
    return os.path.dirname(use.path) or "/"


def _kernel_tree(path: str, own_shm: bool = False) -> str | None:
    """The kernel filesystem ``path`` lies in (/proc, /sys, or /dev outside /dev/shm;
    /dev/shm too with ``own_shm``)."""
    if covers(_SHARED_MEMORY, path) and not own_shm:
        return None
    return next((tree for tree in _KERNEL_TREES if covers(tree, path)), None)


def _is_write_target(use: PathUse) -> bool:
    return use.role == "output" or use.mutable


def _describe(use: PathUse) -> str:
    noun = "harvest pattern" if use.pattern else use.role
    return f"{noun} {use.field!r} ({use.path})"


@dataclass(frozen=True, slots=True)
class _Protected:
    """A ``writable: false`` input: its spelled path, its real one, and every name it
    takes on the way from one to the other (:meth:`_Planner.spellings`)."""

    use: PathUse
    real: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Need:
    """A directory the step needs visible, and whether it must be writable."""

    path: str
    writable: bool
    use: PathUse | None


class _Planner:
    def __init__(self, step: str, host: HostView, own_shm: bool = False) -> None:
        self.step = step
        self.host = host
        #: The engine gives the container a /dev/shm of its own and will not bind
        #: the host's over it (apptainer --contain skips that mount with a warning).
        self.own_shm = own_shm

    def refuse(self, message: str) -> MountRefused:
        return MountRefused(f"step {self.step!r}: {message}")

    def container_device(self, use: PathUse) -> bool:
        """Whether ``use`` is (or links to) a device the container has itself, such as
        /dev/null for a log to discard: its own one does the same, with no mount."""
        if use.pattern:
            return False
        return use.path in CONTAINER_DEVICES or self.host.realpath(use.path) in CONTAINER_DEVICES

    def refuse_kernel_paths(self, uses: Sequence[PathUse]) -> None:
        """A path in /proc, /sys or /dev (but /dev/shm) has that tree itself as its
        nearest existing parent, and mounting it would lay the host's /proc or /sys,
        read-write, over the container's own: the step could write the host's kernel
        settings, and would see the host's processes and devices. No mount is right."""
        for use in uses:
            if self.container_device(use):
                continue
            spelled = needed_directory(use) if use.pattern else use.path
            in_memory = "" if self.own_shm else f" (under {_SHARED_MEMORY} for files in memory)"
            self.refuse_in_kernel_tree(spelled, _describe(use), f"use a path elsewhere{in_memory}")

    def refuse_in_kernel_tree(self, spelled: str, what: str, fix: str) -> None:
        """Refuse ``what`` (at ``spelled``) when it lies in a kernel tree (see above)."""
        for path in dict.fromkeys((spelled, self.host.realpath(spelled))):
            tree = _kernel_tree(path, self.own_shm)
            if tree is not None and self.own_shm and covers(_SHARED_MEMORY, path):
                raise self.refuse(
                    f"{what} is under {_SHARED_MEMORY}, and this engine gives the container a"
                    f" {_SHARED_MEMORY} of its own, which the host's cannot be mounted over:"
                    f" what the step wrote there would be lost; {fix}, or run this step on"
                    " docker, podman or native"
                )
            if tree is not None:
                raise self.refuse(
                    f"{what} is under {tree}, and a container has its own {tree}: mounting"
                    f" the host's would expose the host's {_KERNEL_TREES[tree]}; {fix}, or"
                    " run this step on native"
                )

    def nearest_existing(self, path: str) -> str:
        while not self.host.exists(path) and path != "/":
            path = os.path.dirname(path)
        return path

    def protected(self, uses: Sequence[PathUse]) -> list[_Protected]:
        found = []
        for use in uses:
            if use.role != "input" or use.writable or self.container_device(use):
                continue
            if use.mutable:
                raise self.refuse(
                    f"input {use.field!r} is declared both mutable and writable: false;"
                    " drop one of the two"
                )
            # resolved through the links of its existing parents even when an earlier step
            # makes it (planned ahead): apptainer skips a mount whose target passes a link
            names = tuple(dict.fromkeys(self.spellings(use.path)))
            found.append(_Protected(use, self.host.realpath(use.path), names))
        return found

    def refuse_writes_into(self, uses: Sequence[PathUse], protected: Sequence[_Protected]) -> None:
        for use in uses:
            if not _is_write_target(use):
                continue
            target = needed_directory(use) if use.pattern else use.path
            real = self.host.realpath(target)
            for guard in protected:
                if covers(guard.use.path, target) or covers(guard.real, real):
                    raise self.refuse(
                        f"{_describe(use)} lies inside input {guard.use.field!r}"
                        f" ({guard.use.path}), which is marked writable: false; write it"
                        f" elsewhere or drop writable: false from {guard.use.field!r}"
                    )

    def needs(self, uses: Sequence[PathUse], cwd: str) -> list[_Need]:
        needs = []
        # a directory input given back as the output of the same name (a passthrough, an
        # MS rewritten in place): the directory itself is what the step writes in
        in_place = {u.path for u in uses if u.role == "input" and u.kind == "dir"}
        for use in uses:
            if self.container_device(use):
                continue
            if use.role == "output" and not use.pattern and use.path in in_place:
                needs.append(_Need(use.path, True, use))
                continue
            writable = use.writable or use.role == "output"
            needs.append(_Need(needed_directory(use), writable, use))
            needs.extend(_Need(target, writable, use) for target in self.link_targets(use))
        if cwd != "/":
            needs.append(_Need(cwd, True, None))
        return needs

    def link_targets(self, use: PathUse) -> list[str]:
        """The directories a path reached through symlinks really needs.

        An output is no different from an input here: a results directory
        linked to scratch space, or an output file left as a link to where it
        is kept, is written through the link, and a target the container cannot
        see makes the write fail, or land in the container's own /tmp and be
        lost with it. A dangling link counts too: writing creates its target.
        A link anywhere along the path counts, not only its last name: with
        ``s2 -> /scratch/s2`` and ``/scratch/s2/cur -> real``, ``s2/cur/x.txt``
        leaves the working directory's mount through ``s2``, and the container
        then needs ``/scratch/s2/cur`` by that name. So each name the path takes
        on the way (:meth:`spellings`) has its directory mounted under that
        name, or the container stops at the first name it does not have.
        """
        if use.pattern:
            return self.spellings(needed_directory(use))[1:]
        whole = use.role == "input" and use.kind == "dir"
        return [name if whole else os.path.dirname(name) for name in self.spellings(use.path)[1:]]

    def spellings(self, path: str) -> list[str]:
        """``path``, then each name it becomes as the kernel resolves it: at every
        symlink met, parents included, the rest of the path is joined to the link's
        target and resolved again from its start, until no link is left (or
        :data:`_MAX_HOPS` were followed). The last one is the real path."""
        if self.host.realpath(path) == path:
            return [path]  # no link anywhere along it
        names = [path]
        rest = path.strip("/").split("/")
        resolved = ""  # the part of the latest name walked: no links in it
        while rest:
            name = f"{resolved}/{rest.pop(0)}"
            target = self.host.readlink(name)
            if target is None or len(names) > _MAX_HOPS:
                resolved = name
                continue
            names.append(_without_dotdot(os.path.join(target, *rest), self.host))
            rest, resolved = names[-1].strip("/").split("/"), ""
        return names

    def mounts_for(self, need: _Need, protected: Sequence[_Protected]) -> list[Mount]:
        existing = self.nearest_existing(need.path)
        if existing == "/":
            use = need.use
            if use is None:
                return []
            if use.path == "/":
                raise self.refuse(f"{_describe(use)} is / itself; name a path under it")
            first = "/" + need.path.strip("/").split("/")[0]
            if use.role == "output" and os.path.dirname(use.path.rstrip("/")) == "/":
                raise self.refuse(
                    f"{_describe(use)} sits directly in /, which cannot be mounted into a"
                    " container; write it in a directory"
                )
            if use.role == "output":
                raise self.refuse(
                    f"{_describe(use)} has no existing parent directory but / to mount;"
                    f" create {first} first, or write under an existing directory"
                )
            if not self.host.exists(use.path):
                raise self.refuse(
                    f"{_describe(use)} does not exist, and / is its only existing parent,"
                    f" which cannot be mounted; check the path, or create {first} first"
                )
            raise self.refuse(
                f"{_describe(use)} sits directly in /, which cannot be mounted into a"
                " container; move it into a directory"
            )
        real = self.host.realpath(existing)
        hidden = _image_tree(existing) or _image_tree(real)
        if hidden is not None:
            raise self.refuse_image_tree(need, existing, hidden)
        if need.writable and need.use is not None and _is_write_target(need.use):
            writable = True
        elif need.writable and any(covers(g.real, real) for g in protected):
            # a plain input or the cwd inside a read-only input: the read-only
            # mount already shows it, and a writable one would punch a hole in it
            return []
        else:
            writable = need.writable
        mounts = [Mount(real, real, readonly=not writable)]
        if existing != real:
            mounts.append(Mount(real, existing, readonly=not writable))
        return mounts

    def refuse_image_tree(self, need: _Need, directory: str, hidden: str) -> MountRefused:
        """A need whose directory would cover the image's ``hidden`` (see
        :data:`IMAGE_TREES`). Even an input file mounted by itself is refused: the
        image may have its own file at that path (the host's ``python3`` in
        place of the image's), or a symlink there that the engine follows
        (busybox's ``/usr/bin/env`` is ``/bin/busybox``, its shell too)."""
        laid = directory if covers(hidden, directory) else hidden
        shadow = (
            f"mounting {directory} would lay the host's {laid} over the image's own,"
            " replacing its programs, libraries or settings"
        )
        use = need.use
        if use is None:
            return self.refuse(
                f"the working directory {need.path} is a directory of the image's own;"
                f" {shadow}; run ninja from a directory of your own"
            )
        where = (
            "write it under a directory of your own"
            if _is_write_target(use)
            else "copy it to a directory of your own"
        )
        return self.refuse(
            f"{_describe(use)} is in {directory}, and {shadow}; {where}, or run this step on native"
        )


def _image_tree(path: str) -> str | None:
    """The directory of :data:`IMAGE_TREES` a mount at ``path`` would cover (or, for
    :data:`PROGRAM_TREES`, lie in), if any."""
    if path in IMAGE_TREES:
        return path
    inside = next((tree for tree in _PROGRAM_TREES_IN_ORDER if covers(tree, path)), None)
    return inside or next((tree for tree in _IMAGE_TREES_IN_ORDER if covers(path, tree)), None)


def _depth(mount: Mount) -> tuple[int, str]:
    """Parents before what is nested in them (no mount targets / itself)."""
    return (mount.target.count("/"), mount.target)


def _collapse(mounts: Iterable[Mount]) -> list[Mount]:
    """The fewest mounts with the same effect: one per target (read-write wins), no
    read-write mount inside another, and no read-only mount inside any mount.

    A read-only directory inside a read-write one gives way: the directory is
    writable for whatever else lives there, and :func:`_reassert` keeps the
    read-only inputs in it read-only at their own paths.
    """
    by_target: dict[str, Mount] = {}
    for mount in mounts:
        seen = by_target.get(mount.target)
        if seen is None or (seen.readonly and not mount.readonly):
            by_target[mount.target] = mount
    kept: list[Mount] = []
    for mount in sorted(by_target.values(), key=_depth):
        inner = _innermost(kept, mount.target)
        if inner is None or (inner.readonly and not mount.readonly):
            kept.append(mount)
    return kept


def _innermost(mounts: Sequence[Mount], path: str) -> Mount | None:
    best: Mount | None = None
    for mount in mounts:
        if covers(mount.target, path) and (best is None or _depth(mount) > _depth(best)):
            best = mount
    return best


def _reassert(
    mounts: list[Mount], protected: Sequence[_Protected], host: HostView, ahead: bool
) -> None:
    """Mount every read-only input read-only at its own path where a read-write
    mount would otherwise expose it.

    When the step runs now, an input that is not there cannot be mounted (an
    engine refuses to mount nothing), and the writable directory around it
    would let the tool create it, so the step is refused. Planned ``ahead`` (a
    compiled job, a dry run), an earlier step makes it before this one starts,
    and it gets its read-only mount all the same.
    """
    for guard in protected:
        if not ahead and not host.exists(guard.real):
            raise MountRefused(
                f"input {guard.use.field!r} ({guard.use.path}) is marked writable: false but"
                " does not exist, so no read-only mount can keep the tool from creating it;"
                " check the path, or make it first"
            )
        inner = _innermost(mounts, guard.real)
        if inner is None or not inner.readonly:
            mounts.append(Mount(guard.real, guard.real, readonly=True))
        # Reached by another name through a read-write mount of a linked directory
        # (`lnk` mounted at its own name for an output beside the input), the input
        # was writable there: the tool writes where it was told, `lnk/cal.txt`.
        for name in guard.names:
            inner = _innermost(mounts, name)
            if name == guard.real or inner is None or inner.readonly:
                continue
            below = inner.source + name[len(inner.target) :]
            if host.realpath(below) == below:  # no link on the way: that mount shows it
                mounts.append(Mount(guard.real, name, readonly=True))


def _absolute(use: PathUse, cwd: str, host: HostView) -> PathUse:
    path = _without_dotdot(os.path.join(cwd, use.path), host)
    if path == use.path:
        return use
    return PathUse(path, use.role, use.field, use.kind, use.writable, use.mutable, use.pattern)


def _without_dotdot(path: str, host: HostView) -> str:
    """``path`` normalised, with ``..`` read as the kernel reads it.

    ``link/..`` is the parent of where ``link`` points, not the directory
    ``link`` sits in; normalising the text alone mounted the wrong directory,
    and an output written there never left the container.
    """
    parts = path.split("/")
    if ".." not in parts:
        return os.path.normpath(path)
    last = len(parts) - 1 - parts[::-1].index("..")
    head = host.realpath("/".join(parts[: last + 1]) or "/")
    return os.path.normpath("/".join([head, *parts[last + 1 :]]))


def plan_mounts(
    paths: Sequence[PathUse],
    cwd: str,
    *,
    step: str = "?",
    host: HostView = LOCAL_HOST,
    ahead: bool = False,
    own_shm: bool = False,
) -> tuple[Mount, ...]:
    """The bind mounts that make ``paths`` and ``cwd`` visible as the cab declares them.

    ``ahead``: planned before earlier steps have run (a compiled job, a dry
    run), so inputs that are not there yet will be. ``own_shm``: the engine
    keeps a /dev/shm of its own (apptainer), so no path may lie in it.

    Raises :class:`MountRefused` when no arrangement of mounts can honour the
    declaration (see the module docstring); parents come before the mounts
    nested in them.
    """
    cwd = os.path.normpath(cwd)
    planner = _Planner(step, host, own_shm)
    uses = [_absolute(use, cwd, host) for use in paths]
    planner.refuse_kernel_paths(uses)
    # the step works in ninja's directory, which is mounted for it too
    planner.refuse_in_kernel_tree(cwd, f"the working directory {cwd}", "run ninja from elsewhere")
    protected = planner.protected(uses)
    planner.refuse_writes_into(uses, protected)
    wanted: list[Mount] = []
    for need in planner.needs(uses, cwd):
        wanted.extend(planner.mounts_for(need, protected))
    mounts = _collapse(wanted)
    _reassert(mounts, protected, host, ahead)
    for use, absolute in zip(paths, uses, strict=True):
        unseen = _unseen_link(os.path.join(cwd, use.path), mounts, host)
        if unseen is not None:
            raise planner.refuse(_unseen_link_message(use, unseen, absolute.path))
    return tuple(sorted(mounts, key=_depth))


def _unseen_link(path: str, mounts: Sequence[Mount], host: HostView) -> str | None:
    """The link ``path`` goes up out of (``link/..``) when the container cannot see it
    by that name, else None.

    The kernel reads ``link/..`` as the parent of where the link points, and the
    mounts make that directory visible; but the tool is handed the path as it
    is, and where the folder holding the link is not mounted, the link is not
    there in the container: an output written by that name stayed inside the
    container and was lost with it, and the step succeeded.
    """
    parts = path.split("/")
    if ".." not in parts:
        return None
    last = len(parts) - 1 - parts[::-1].index("..")
    link = _without_dotdot("/".join(parts[:last]) or "/", host)
    if link == "/" or host.readlink(link) is None:
        return None
    folder = os.path.dirname(link)
    if host.realpath(folder) == folder and any(
        m.source == m.target and covers(m.target, folder) for m in mounts
    ):
        return None
    return link


def _unseen_link_message(use: PathUse, link: str, meant: str) -> str:
    return (
        f"{_describe(use)} goes up out of the link {link} ('..' after it), which is not in"
        " the container: there the path names another place, and what the tool writes by"
        f" it would be lost with the container; give the path as this host reads it, {meant}"
    )


def mount_option(mount: Mount) -> str:
    """``mount`` as the ``--mount`` value docker, podman and apptainer all accept.

    The value is a CSV record, so a path holding a comma, a quote, a colon or a
    line end is quoted the CSV way rather than breaking the option apart, which
    is why ``--mount`` is used instead of ``-v``/``--bind`` (whose ``:`` cannot be
    escaped). The writer quotes only the characters of its own line terminator,
    so it is given ``\r\n`` and the record's ending is cut off afterwards: with
    none, a path holding a newline went unquoted and the engines read two records.
    """
    fields = ["type=bind", f"source={mount.source}", f"target={mount.target}"]
    if mount.readonly:
        fields.append("readonly")
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=_CRLF).writerow(fields)
    return buffer.getvalue().removesuffix(_CRLF)


_CRLF = "\r\n"


def unquotable_path(mounts: Sequence[Mount], words: Sequence[str] = ()) -> tuple[str, str] | None:
    """A mounted path, or a word of the command, no engine can carry; with why; or None.

    The engines parse a ``--mount`` record with Go's CSV reader, which turns a
    quoted ``\r\n`` into ``\n``; and they hand mounts, the command line and the
    working directory on as UTF-8 text, which turns a byte of another encoding
    (``lat\xe9in``, kept by Python as a surrogate) into U+FFFD: either way the
    container would see another path, or none.
    """
    for mount in mounts:
        for path in (mount.source, mount.target):
            if _CRLF in path:
                return path, "holds a carriage return before a newline, which"
    for word in (*(p for m in mounts for p in (m.source, m.target)), *words):
        try:
            word.encode()
        except UnicodeEncodeError:
            return word, "is not UTF-8 (a byte of another encoding in its name), which"
    return None
