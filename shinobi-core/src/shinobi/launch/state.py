"""Rebuilding the state of many launches at once, one engine question per plugin.

``ninja runs`` and ``ninja clean`` need the state of every launch of a
workspace; asking each launch separately would cost one sacct call per
launch. Launches are grouped by the plugin that answers for them, and each
group is handed to that plugin's ``status_many``. A launch found ended is
recorded so (:func:`shinobi.launch.handle.note_ended`): a ``ninja run``
starting in its workspace, which warns of launches still running there,
then need not ask about it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shinobi.errors import BackendNotFound, ShinobiError, UsageError
from shinobi.launch.handle import LaunchHandle, note_ended, noted_end
from shinobi.launch.tracking import LaunchStatus, tracker_for

__all__ = ["launches_going", "statuses", "with_noted_end"]


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
            found[i] = with_noted_end(answer)
            if answer.final:
                note_ended(answer.handle, answer.state)
    return [s for s in found if s is not None]


def with_noted_end(status: LaunchStatus) -> LaunchStatus:
    """``status`` with how its launch was seen to end, if it was (its ``ended`` file).

    The engine is still asked, for the details only it has (exit codes, times);
    but a launch on record as completed stays completed when the engine cannot
    be reached or has purged its jobs, instead of turning "unknown" (and kept by
    ``ninja clean``, as if its jobs went on) or "cancelled".
    """
    if status.noted is None:
        status.noted = noted_end(status.handle)
    return status


def _alone(handle: LaunchHandle) -> LaunchStatus:
    """One launch's state, or why its handle cannot give one (named by its path), so
    one damaged handle does not hide every other launch from ``runs`` and ``clean``."""
    try:
        (answer,) = tracker_for(handle).status_many([handle])
    except UsageError as exc:
        where = f" ({handle.path})" if handle.path is not None else ""
        return LaunchStatus(handle=handle, error=f"{exc}{where}", damaged=True)
    return answer


def launches_going(workdir: Path) -> list[str]:
    """Warnings of the workspace's launches still running, for a ``ninja run``
    starting there: its steps and theirs may write the same paths, each taking
    the other's product for its own. Only launches not recorded as ended are
    asked about, one engine question for all of them."""
    from shinobi.launch.find import unended_launches

    handles = unended_launches(workdir)
    if not handles:
        return []
    try:
        found = statuses(handles)
    except ShinobiError as exc:  # a plugin's settings it refuses: the run goes on, told
        names = ", ".join(h.name for h in handles)
        return [
            f"could not ask whether the launches {names} of this workspace are still running"
            f" ({exc}); if one is, a step of it and one of this run that write the same path"
            " take each other's products for their own (`ninja runs` lists them)"
        ]
    return [said for status in found if (said := _going(status)) is not None]


def _going(status: LaunchStatus) -> str | None:
    """The warning of one launch that may still be running; None for one that ended,
    or whose plugin is not installed (nothing here can run it any more)."""
    handle = status.handle
    seen = f"`ninja status {handle.run_id}` shows it, `ninja cancel {handle.run_id}` stops it"
    if status.state == "running":
        return (
            f"launch {handle.name} ({handle.engine}) of this workspace is still running: a"
            " step of it and one of this run that write the same path take each other's"
            f" products for their own (wait for it, or run in another directory); {seen}"
        )
    if status.final or status.damaged or status.error is None:
        return None
    return (
        f"could not ask whether launch {handle.name} ({handle.engine}) of this workspace is"
        f" still running ({status.error}); if it is, a step of it and one of this run that"
        f" write the same path take each other's products for their own; {seen}"
    )
