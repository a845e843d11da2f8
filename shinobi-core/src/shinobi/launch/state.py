"""Rebuilding the state of many launches at once, one engine question per plugin.

``ninja runs`` and ``ninja clean`` need the state of every launch of a
workspace; asking each launch separately would cost one sacct call per
launch. Launches are grouped by the plugin that answers for them, and each
group is handed to that plugin's ``status_many``.
"""

from __future__ import annotations

from collections.abc import Sequence

from shinobi.errors import BackendNotFound, UsageError
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
            answers = [LaunchStatus(handle=h, error=str(exc), damaged=True) for h in members]
        except UsageError:  # a damaged handle among them: each on its own, to say which
            answers = [_alone(h) for h in members]
        for i, answer in zip(indices, answers, strict=True):
            found[i] = answer
    return [s for s in found if s is not None]


def _alone(handle: LaunchHandle) -> LaunchStatus:
    """One launch's state, or why its handle cannot give one (named by its path), so
    one damaged handle does not hide every other launch from ``runs`` and ``clean``."""
    try:
        (answer,) = tracker_for(handle).status_many([handle])
    except UsageError as exc:
        where = f" ({handle.path})" if handle.path is not None else ""
        return LaunchStatus(handle=handle, error=f"{exc}{where}", damaged=True)
    return answer
