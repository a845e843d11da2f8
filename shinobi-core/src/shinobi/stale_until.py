"""A loop's until file left by an earlier run must not end the loop.

A loop converges when its until file exists after a cycle. Tools that write
such a flag rarely delete the one a previous run left, and a ``converged``
still in the MS from yesterday would end today's loop after its first cycle,
before it had converged at all. So right before the loop's first cycle starts,
the until file of every cycle is looked at (its inode, size and modification
time; a path templated on the cycle index is a file per cycle, and a flag left
for cycle 4 must not end cycle 3), and a file still exactly as it was then
counts only if a cycle of this run vouches for it: every step of a loop
records whether, when it ended, its cycle's file was no longer as it was
before the loop (``details["until_changed"]``), and that record goes into the
step cache with its result, so a cached cycle vouches for the flag exactly as
it did when it ran. Whichever step of a cycle writes the file, and however
many times, does not matter.

Looking when the loop starts, not when the run does, is what lets two loops
of one run share a path: the second one judges the flag against how the first
left it. They must then run one after the other, so sharing is warned about.

An until path a step only returns (a pystep's) is not known when the loop
starts, so every path handed to the first cycle is noted too, and a returned
path that is one of them is judged the same way (see
``shinobi.scheduler._Wavefront.note_handed``).

Nothing is removed: the until path may be one the loop is handed.
``ninja run`` knows the paths from its plan and looks as each loop starts; a
compiled loop looks in whichever job of its first cycle starts first (see
``shinobi_slurm.scripts``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from shinobi.plan import Plan, PlannedStep
from shinobi.wording import counted

__all__ = [
    "Signature",
    "UntilFile",
    "as_before",
    "shared_until_warnings",
    "signature",
    "until_changed",
    "until_files",
]

#: What changes when a file is written: inode, size, modification time (ns).
Signature = tuple[int, int, int]


def signature(path: str) -> Signature | None:
    """``path``'s signature, or None when nothing is there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class UntilFile:
    """The until file of cycle ``iteration`` of loop ``loop`` (dotted, nested
    recipes included) at ``path``."""

    loop: str
    path: str
    iteration: int


def _steps(plan: Plan, prefix: str = "") -> Iterator[tuple[str, PlannedStep]]:
    """Every planned step with the prefix its loops are known by at run time.

    A nested recipe's steps run under the name of the step that runs it, and
    a scattered one's under each slice's (``per[0].``), so its slices are
    walked one by one.
    """
    for step in plan.steps:
        yield prefix, step
        for part in step.slices or [step]:
            if part.children is not None:
                yield from _steps(part.children, f"{part.name}.")


def until_files(plan: Plan, cwd: str) -> list[UntilFile]:
    """The until file of every cycle of every loop of ``plan`` whose path is known
    before the run."""
    found: list[UntilFile] = []
    for prefix, step in _steps(plan):
        node = step.node
        if node.until is None or node.loop is None or node.iteration is None:
            continue
        path = step.outputs.get(node.until)
        if isinstance(path, str | os.PathLike):
            full = os.path.join(cwd, os.fspath(path))
            found.append(UntilFile(f"{prefix}{node.loop}", full, node.iteration))
    return found


def shared_until_warnings(found: list[UntilFile]) -> list[str]:
    """One warning per until path that more than one loop uses.

    Each loop judges the file by how it was when that loop started, so a loop
    that starts while another is still writing the flag would take the other's
    flag for its own convergence.
    """
    loops: dict[str, dict[str, None]] = {}
    for until in found:
        loops.setdefault(until.path, {})[until.loop] = None
    return [
        f"loops {_named(list(names))} share the until file {path!r}: each judges it"
        " by how it is when that loop starts, so they work only one after the other;"
        " give each loop its own until path unless one waits for the other's outputs"
        for path, names in loops.items()
        if len(names) > 1
    ]


#: How many loops sharing a path a warning names (a scatter's slices are many).
_NAMED = 3


def _named(loops: list[str]) -> str:
    """``'a' and 'b'``, or the first few and how many more."""
    shown = [repr(loop) for loop in loops[:_NAMED]]
    if len(loops) > _NAMED:
        return f"{', '.join(shown)} and {counted(len(loops) - _NAMED, 'more loop')}"
    return f"{', '.join(shown[:-1])} and {shown[-1]}"


def as_before(paths: dict[int, str]) -> dict[int, tuple[str, Signature | None]]:
    """Each cycle's until file (``paths``) with its signature now, looked at once per file."""
    seen: dict[str, Signature | None] = {}
    for path in paths.values():
        if path not in seen:
            seen[path] = signature(path)
    return {cycle: (path, seen[path]) for cycle, path in paths.items()}


def until_changed(before: tuple[str, Signature | None] | None) -> bool | None:
    """Whether a cycle's until file is no longer as noted before the loop (None:
    nothing was noted, its path was not known before the loop)."""
    if before is None:
        return None
    path, then = before
    now = signature(path)
    return now is not None and now != then
