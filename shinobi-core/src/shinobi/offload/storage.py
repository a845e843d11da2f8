"""Notes on paths a compiled job will need but this host cannot see.

A compiled job runs later, on another node, with nobody there to read a
traceback; a tool told to write ``/scratch/x`` when ``/scratch`` does not
exist fails there. Compile cannot know what the nodes mount, so it only
notes output directories that do not exist here (on a shared filesystem,
here is the same as there) and that no step of the workflow writes itself.
"""

from __future__ import annotations

import os

from shinobi.offload.jobs import JobGraph

__all__ = ["missing_directories"]


def missing_directories(graph: JobGraph, limit: int = 5) -> list[str]:
    """One note per output directory that does not exist yet (at most ``limit``)."""
    # each output use's path normalised once: the set of written paths needs all
    # of them before any is checked, and a second normpath of each was a third
    # of this note's time in a 10,000-job compile
    outputs = [
        (job, use, os.path.normpath(use.path))
        for job in graph.jobs
        for use in job.paths
        if use.role == "output"
    ]
    written = {path for _, _, path in outputs}
    notes: list[str] = []
    checked: set[str] = set()
    for job, use, path in outputs:
        if use.pattern:
            continue
        parent = os.path.dirname(path)
        if parent in checked:
            continue
        checked.add(parent)
        if parent in written or os.path.isdir(parent):
            continue
        if len(notes) < limit:
            notes.append(
                f"step {job.name!r} writes {use.path}, but {parent} does not exist on this"
                " host: create it on storage the nodes share, or the job will fail unless"
                " the tool makes it"
            )
    return notes
