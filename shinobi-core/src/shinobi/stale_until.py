"""A loop's until file left by an earlier run must not end the loop.

A loop converges when its until file exists after a cycle. Tools that write
such a flag rarely delete the one a previous run left, and a ``converged``
still in the MS from yesterday would end today's loop after its first cycle,
before it had converged at all. So the file is looked at before the loop's
first cycle (its inode, size and modification time), and a file still
exactly as it was then counts only if a cycle of this run vouches for it:
every step of a loop records whether, when it ended, the file was no longer
as it was before the loop (``details["until_changed"]``), and that record
goes into the step cache with its result, so a cached cycle vouches for the
flag exactly as it did when it ran. Whichever step of a cycle writes the
file, and however many times, does not matter.

Nothing is removed: the until path may be one the loop is handed.
``ninja run`` looks before the run starts; a compiled loop looks in
whichever job of its first cycle starts first (see ``shinobi_slurm.scripts``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from shinobi.plan import Plan, PlannedStep

__all__ = ["Signature", "UntilFile", "signature", "until_changed", "until_files"]

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
    """The until file of loop ``loop`` (dotted, nested recipes included) at ``path``."""

    loop: str
    path: str


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
    """The until file of every loop of ``plan`` whose path is known before the run."""
    found: list[UntilFile] = []
    for prefix, step in _steps(plan):
        node = step.node
        if node.until is None or node.iteration != 1:
            continue
        path = step.outputs.get(node.until)
        if isinstance(path, str | os.PathLike):
            found.append(UntilFile(f"{prefix}{node.loop}", os.path.join(cwd, os.fspath(path))))
    return found


def until_changed(before: tuple[str, Signature | None] | None) -> bool | None:
    """Whether the loop's until file is no longer as noted before the loop (None:
    nothing was noted, its path was not known before the run)."""
    if before is None:
        return None
    path, then = before
    now = signature(path)
    return now is not None and now != then
