"""Compiling a recipe into a cluster workflow that runs with no ninja process behind it.

``base`` is the interface an engine implements (shinobi-slurm's ``slurm``);
``eligibility`` decides whether a recipe can be offloaded at all and lists
every reason it cannot; ``jobs`` turns a statically resolved plan into
engine-neutral jobs and edges; ``ordering`` adds the edges that in-place
mutation of shared paths needs; ``wrapping`` puts each command inside the
chosen container runtime; ``storage`` notes output directories that do not
exist. An engine only renders and submits.
"""

from __future__ import annotations

__all__ = ["base", "eligibility", "jobs", "ordering", "storage", "wrapping"]
