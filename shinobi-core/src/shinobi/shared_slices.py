"""Scatter slices that would rewrite the same path at once.

``ninja compile`` runs the slices of a scatter one at a time when more than
one of them uses a path that one rewrites (see :mod:`shinobi.offload.ordering`);
a local run with more than one worker must be no less careful. Two slices
that produce the very same output are worse than a race: run one after the
other, the second still replaces the first's product, so that case is named.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

__all__ = [
    "compared_uses",
    "every_planned_step",
    "globs_overlap",
    "harvests_overlapping",
    "plan_slices",
    "planned_slice_warnings",
    "slices_clashing",
    "slices_sharing",
]

#: The slices whose harvest patterns are compared pairwise (the rest are not).
_HARVESTS_COMPARED = 100


def plan_slices(
    node: Any, name: str, parts: Sequence[Mapping[str, Any]], cwd: str
) -> list[list[Any]]:
    """Each slice's paths, planned as the dry run plans them: a cab's own, or those
    of every step of a nested recipe (a pystep's are its own business: none)."""
    from shinobi.plan import plan_step

    planned = [
        plan_step(f"{name}[{k}]", node, dict(part), cwd, check=False)
        for k, part in enumerate(parts)
    ]
    return [compared_uses(p) for p in planned]


def compared_uses(part: Any) -> list[Any]:
    """The paths of one slice (or step) as ordering compares them: those of each
    step it holds, each step's own output folders left out (see
    :func:`shinobi.offload.ordering.step_uses`)."""
    from shinobi.offload.ordering import step_uses

    return [u for s in every_planned_step([part]) for u in step_uses(s.paths)]


def slices_sharing(name: str, uses: Sequence[Sequence[Any]]) -> str | None:
    """Why the slices of step ``name`` (``uses``: each one's paths) must run one
    at a time, as a warning; None when they may overlap."""
    from shinobi.offload.ordering import shared_rewritten

    shared = shared_rewritten(uses)
    return None if shared is None else f"step {name!r}: {shared.note()}"


def slices_clashing(name: str, uses: Sequence[Sequence[Any]]) -> str | None:
    """A warning when two slices of step ``name`` produce the very same output, or
    None. One worker runs slices in turn, so only this case of
    :func:`slices_sharing` matters there: the second still replaces the first's
    product."""
    from shinobi.offload.ordering import SharedPath, same_product

    clash = same_product(uses)
    return None if clash is None else f"step {name!r}: {SharedPath(clash[0], clash).note()}"


def planned_slice_warnings(plan: Any, cwd: str) -> list[str]:
    """What a run would warn of ``plan``'s scatters at any number of workers (two
    slices writing one output, a harvest glob taking another slice's files), for
    a dry run: the same words, from the slices it planned, nested recipes too
    (a nested step's planned name already carries its recipe's)."""
    found: list[str] = []
    for step in plan.steps:
        if step.slices is not None and len(step.slices) > 1:
            name = step.name
            uses = [[u for s in every_planned_step([p]) for u in s.paths] for p in step.slices]
            found += [
                warning
                for warning in (slices_clashing(name, uses), harvests_overlapping(name, uses, cwd))
                if warning is not None
            ]
        if step.children is not None:
            found += planned_slice_warnings(step.children, cwd)
    return found


def harvests_overlapping(name: str, uses: Sequence[Sequence[Any]], cwd: str) -> str | None:
    """A warning when one slice's harvest glob also matches what another's collects
    (``img-*.fits`` and ``img-deep-*.fits``): the first then takes the other's
    files as its own, in whichever order they run, and hands them on."""
    patterns = [
        sorted({u.path for u in slice_uses if u.pattern and u.role == "output"})
        for slice_uses in uses[:_HARVESTS_COMPARED]
    ]
    for i, mine in enumerate(patterns):
        for j, theirs in enumerate(patterns):
            if i == j:
                continue
            for wide in mine:
                narrow = next((t for t in theirs if globs_overlap(wide, t)), None)
                if narrow is None:
                    continue
                what = (
                    f"is slice {j}'s too"
                    if narrow == wide
                    else f"also matches the files {_shown(narrow, cwd)!r} of slice {j} collects"
                )
                return (
                    f"step {name!r}: the harvest pattern {_shown(wide, cwd)!r} of slice {i}"
                    f" {what}, so slice {i} takes that slice's files as its own; make each"
                    " slice's pattern match its own files only (name them after an input"
                    " that differs per slice, with a separator no name contains:"
                    " '{name}.*.fits')"
                )
    return None


def _shown(path: str, cwd: str) -> str:
    """``path`` as the recipe wrote it: relative to the run's directory when under it."""
    from shinobi.cache_entries import relative_path

    return relative_path(path, (cwd,))


def globs_overlap(wide: str, narrow: str) -> bool:
    """Whether a name matching ``narrow`` can match ``wide`` too (one sure witness:
    ``narrow`` with its wildcards filled in the plainest way). Compared part by part
    of the path, as glob does: its ``*`` never crosses a ``/``."""
    import fnmatch

    parts, witness = wide.split("/"), _plainest_match(narrow).split("/")
    return len(parts) == len(witness) and all(
        fnmatch.fnmatchcase(name, pattern) for name, pattern in zip(witness, parts, strict=True)
    )


def _plainest_match(pattern: str) -> str:
    """A name ``pattern`` matches: ``*`` as nothing, ``?`` as ``x``, a class as its
    first character (``[[]`` as ``[``)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            i += 1
        elif c == "?":
            out.append("x")
            i += 1
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            first = pattern[i + 1]
            out.append("x" if first in "!^" else first)
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def every_planned_step(steps: Iterable[Any]) -> Iterator[Any]:
    """Each planned step, its slices and the steps of its nested recipe, depth first."""
    for step in steps:
        yield step
        yield from every_planned_step(step.slices or ())
        if step.children is not None:
            yield from every_planned_step(step.children.steps)
