"""Rebuilding the state of many launches at once, one engine question per plugin.

``ninja runs`` and ``ninja clean`` need the state of every launch of a
workspace; asking each launch separately would cost one sacct call per
launch. Launches are grouped by the plugin that answers for them, and each
group is handed to that plugin's ``status_many``.
"""

from __future__ import annotations

from collections.abc import Sequence

from shinobi.errors import BackendNotFound
from shinobi.launch.handle import LaunchHandle
from shinobi.launch.tracking import LaunchStatus, tracker_for

__all__ = ["statuses"]


def statuses(handles: Sequence[LaunchHandle]) -> list[LaunchStatus]:
    """The state of every launch in ``handles``, in the same order."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, handle in enumerate(handles):
        groups.setdefault((handle.group, handle.engine), []).append(index)
    found: list[LaunchStatus | None] = [None] * len(handles)
    for indices in groups.values():
        members = [handles[i] for i in indices]
        try:
            answers = tracker_for(members[0]).status_many(members)
        except BackendNotFound as exc:
            answers = [LaunchStatus(handle=h, error=str(exc)) for h in members]
        for i, answer in zip(indices, answers, strict=True):
            found[i] = answer
    return [s for s in found if s is not None]
