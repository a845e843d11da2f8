"""How the name a step runs under relates to the graph node it runs.

A scattered step runs once per slice, as ``S[0]``, ``S[1]``...; a step of a
scattered nested recipe runs inside each slice of it, as ``R[0].S``. The graph
lists each once, without the slice numbers (``S``, ``R.S``): records that
speak of both (the manifest, the run's statuses) map one onto the other here.
"""

from __future__ import annotations

__all__ = ["in_slice_of", "scattered_step", "unsliced"]


def scattered_step(name: str) -> str:
    """The scattered step a slice's name belongs to (``image[3]`` is ``image``,
    ``a[0].s[1]`` is ``a[0].s``); a name that is no slice's, as it is."""
    return name[: name.rindex("[")] if name.endswith("]") and "[" in name else name


def unsliced(name: str) -> str:
    """``name`` without its slice numbers: ``ns[2].first`` is ``ns.first``."""
    while "[" in name:
        start = name.index("[")
        end = name.find("]", start)
        if end < 0:
            break
        name = name[:start] + name[end + 1 :]
    return name


def in_slice_of(name: str, other: str) -> str:
    """The graph node ``other`` as the step running as ``name`` meets it: a step of a
    nested recipe ``name`` runs in a slice of, in that slice (``ns[0].first``
    beside ``ns[0].second`` for ``ns.first``; ``a[0].u`` beside ``a[0].b[1].s``
    for ``a.u``); any other as the graph names it."""
    prefix = name.rpartition(".")[0]
    while prefix:  # the innermost recipe holding both first
        bare = unsliced(prefix)
        if other.startswith(f"{bare}."):
            return f"{prefix}.{other[len(bare) + 1 :]}" if prefix != bare else other
        prefix = prefix.rpartition(".")[0]
    return other
