"""Whether a step-cache entry was made under the limits its step declares.

A step's declared resources are not part of its key: they say how much of
the machine it takes, not what it computes. Under
``execution.enforce_resources = "always"``, though, the user asks that a step
breaking its declared memory be killed (or refused where the engine cannot
apply the limit). A result stored by a run that did not apply its limits
(``never``, or ``auto`` dropping one this host cannot enforce) was replayed as
"cached", and the kill never happened.

So an entry records the limits its run applied (:data:`FIELD`), and under
``always`` a hit needs every limit declared now to have been applied then, no
larger: a result made under the limits holds for any later run, one made
without them runs again. Entries written before the field existed read as
made without limits, which matters only then. A backend that enforces nothing
(native, venv) is never asked: running it again would apply nothing either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from shinobi.errors import ShinobiError

if TYPE_CHECKING:
    from shinobi.backends.base import Backend, Invocation
    from shinobi.resources import Resources

__all__ = ["FIELD", "Limits", "applied_limits", "demanded_limits", "limits_satisfy"]

#: The entry's field: ``{"cpus": ..., "memory": ...}`` as applied, or null.
FIELD = "limits_applied"

#: ``cpus`` (a number) and ``memory`` (bytes); None where nothing is limited.
Limits = dict[str, float | int | None]


def _limits(resources: Resources) -> Limits:
    """The limits ``resources`` asks for (``cpus="all"`` asks for no limit)."""
    cpus = resources.cpus
    return {"cpus": None if cpus in (None, "all") else float(cpus), "memory": resources.memory}


def _declares(invocation: Invocation) -> bool:
    return invocation.resources is not None and invocation.resources.declared


def _policy(backend: Backend) -> str:
    """The step's ``enforce_resources`` (the backend's table may override the global one)."""
    return str(backend.settings.get("enforce_resources", "auto"))


def _reads_policy(backend: Backend) -> bool:
    """Whether ``backend`` passes limits by the policy (the container backends);
    one that does not (slurm) applies what is declared whatever it says."""
    keys = backend.settings_keys
    return keys is not None and "enforce_resources" in keys


def _dropped_some(backend: Backend, invocation: Invocation) -> bool:
    """Whether ``backend``, under ``auto``, left out a declared limit for this step.

    :attr:`Rendered.warnings` names each declared limit the engine cannot
    apply on this host; what cannot be worked out counts as dropped.
    """
    try:
        return bool(backend.render_for_job(invocation).warnings)
    except ShinobiError:
        return True


def applied_limits(backend: Backend, invocation: Invocation) -> Limits | None:
    """The limits the run of ``invocation`` on ``backend`` applied, for the entry;
    None when it did not apply what the step declares."""
    if not _declares(invocation):
        return {"cpus": None, "memory": None}  # nothing to apply
    if not backend.capabilities.enforces_resources:
        return None
    if _reads_policy(backend):
        policy = _policy(backend)
        if policy == "never" or (policy == "auto" and _dropped_some(backend, invocation)):
            return None
    assert invocation.resources is not None
    return _limits(invocation.resources)


def demanded_limits(backend: Backend, invocation: Invocation) -> Limits | None:
    """The limits a hit must have been made under; None when any entry will do
    (a policy other than ``always``, a backend that enforces nothing, no limit)."""
    if not _declares(invocation) or not backend.capabilities.enforces_resources:
        return None
    if _policy(backend) != "always":
        return None
    assert invocation.resources is not None
    wanted = _limits(invocation.resources)
    return wanted if any(v is not None for v in wanted.values()) else None


def limits_satisfy(recorded: Any, wanted: Mapping[str, float | int | None]) -> bool:
    """Whether an entry's :data:`FIELD` (as read, maybe missing or damaged) is
    within ``wanted``: each limit wanted was applied, and no larger."""
    if not isinstance(recorded, dict):
        return False
    for name, limit in wanted.items():
        made = recorded.get(name)
        if limit is None:
            continue
        if not isinstance(made, int | float) or isinstance(made, bool) or made > limit:
            return False
    return True
