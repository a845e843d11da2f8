"""A loop's until file left by an earlier run: removed before the loop's first cycle.

A loop converges when its until file exists after a cycle. Tools that write
such a flag rarely delete the one a previous run left, and a ``converged``
still in the MS from yesterday would end today's loop after its first cycle,
before it had converged at all. So before the first cycle starts, that file
is removed, with a warning; from then on its existence is the verdict,
whichever step of the cycle writes it, and however many times.

Only a file is removed, and only one the loop's body declares as a path it
writes (an ``implicit`` template of its producing cab), never an input handed
through: that is a product of the loop, which the loop makes again, as a
build tool removes a target before remaking it. ``ninja run`` removes it
before the run starts; a compiled loop removes it in whichever job of the
first cycle starts first, before that job's command (see
``shinobi_slurm.scripts``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from shinobi.plan import Plan, PlannedStep, cab_of

__all__ = ["StaleUntil", "remove_stale_until_files", "stale_until_files"]


@dataclass(frozen=True, slots=True)
class StaleUntil:
    """The until file of loop ``loop`` (dotted, nested recipes included) at ``path``."""

    loop: str
    path: str


def _steps(plan: Plan, prefix: str = "") -> Iterator[tuple[str, PlannedStep]]:
    for step in plan.steps:
        yield prefix, step
        if step.children is not None:
            yield from _steps(step.children, f"{prefix}{step.node.name}.")


def stale_until_files(plan: Plan, cwd: str) -> list[StaleUntil]:
    """The until file of every loop of ``plan`` whose path is known before the run."""
    found: list[StaleUntil] = []
    for prefix, step in _steps(plan):
        node = step.node
        if node.until is None or node.iteration != 1:
            continue
        cab = cab_of(node.step)
        if cab is None or not cab.meta(node.until).implicit:
            continue  # a pystep's return value, or an input handed through: not ours
        if node.until in getattr(cab.inputs_model, "model_fields", {}):
            continue
        path = step.outputs.get(node.until)
        if isinstance(path, str | os.PathLike):
            found.append(StaleUntil(f"{prefix}{node.loop}", os.path.join(cwd, os.fspath(path))))
    return found


def remove_stale_until_files(plan: Plan, cwd: str) -> list[str]:
    """Remove the until files an earlier run left; returns what to tell the user."""
    said = []
    for stale in stale_until_files(plan, cwd):
        if os.path.isfile(stale.path) and not os.path.islink(stale.path):
            os.remove(stale.path)
            said.append(
                f"loop {stale.loop!r}: removed {stale.path}, its until file, left before its"
                " first cycle (by an earlier run?): only a cycle of this run may end the loop"
            )
    return said
