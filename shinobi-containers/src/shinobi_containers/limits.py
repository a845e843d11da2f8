"""Turning a step's declared footprint into runtime flags, honestly.

``--cpus`` and ``--memory`` are spelled the same by docker, podman and
apptainer. Which of them are emitted depends on ``enforce_resources``:
``never`` emits none, ``always`` emits every declared one, and ``auto`` (the
default) emits those the runtime can apply here (see :mod:`cgroups`) and
says which it dropped, so one unenforceable dimension does not take the
others, and the run, down with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from shinobi.resources import Resources
from shinobi_containers.cgroups import UNPROBED, CgroupReach

__all__ = [
    "EnforceMode",
    "LimitFlags",
    "dropped_warning",
    "limit_flags",
    "overridden_warning",
    "within_host",
]

EnforceMode = Literal["auto", "always", "never"]

_FLAG = {"cpu": "--cpus", "memory": "--memory"}


@dataclass(frozen=True, slots=True)
class LimitFlags:
    """The limit flags for one step, and the declared limits left out (flag -> why)."""

    flags: tuple[str, ...] = ()
    memory: int | None = None
    cpus: float | None = None
    dropped: Mapping[str, str] = field(default_factory=dict)

    @property
    def emitted(self) -> bool:
        return bool(self.flags)


def _number(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")


def limit_flags(
    resources: Resources | None, mode: EnforceMode, reach: CgroupReach = UNPROBED
) -> LimitFlags:
    """The flags for ``resources`` under ``mode``; ``reach`` matters only for ``auto``.

    ``cpus="all"`` asks for the whole machine, which is no limit at all.
    """
    if resources is None or mode == "never":
        return LimitFlags()
    wanted: dict[str, str] = {}
    if resources.cpus is not None and resources.cpus != "all":
        wanted["cpu"] = _number(float(resources.cpus))
    if resources.memory is not None:
        wanted["memory"] = str(resources.memory)
    flags: list[str] = []
    dropped: dict[str, str] = {}
    for controller, value in wanted.items():
        if mode == "auto" and not reach.can_apply(controller):
            dropped[_FLAG[controller]] = reach.missing[controller]
            continue
        flags += [_FLAG[controller], value]
    return LimitFlags(
        flags=tuple(flags),
        memory=resources.memory if "--memory" in flags else None,
        cpus=float(wanted["cpu"]) if "--cpus" in flags else None,
        dropped=dropped,
    )


def dropped_warning(engine: str, flag: str, why: str) -> str:
    """The one warning a run gets about a limit it could not pass on."""
    return (
        f"{engine} cannot enforce {flag} on this host ({why}); steps that declare it run"
        f' without that limit. Set execution.enforce_resources = "always" to fail instead,'
        ' or "never" to pass no limits at all'
    )


#: What a step escapes when ``run_flags`` replaces its declared limit, by limit.
_ESCAPED = {
    "memory": "a step that outgrows its declared memory is not killed for it",
    "cpu": "a step may use more CPUs than it declares",
}


def overridden_warning(engine: str, flag: str, limit: str) -> str:
    """The one warning a run gets about a ``run_flags`` option that replaces the
    ``limit`` (``memory`` or ``cpu``) ninja sets from what a step declares."""
    return (
        f"backend.{engine}.run_flags sets {flag}, which overrides the {limit} limit"
        f" steps declare ({_ESCAPED[limit]}); drop it from run_flags to apply each step's"
        ' own, or set execution.enforce_resources = "never" if run_flags is meant to set'
        " the limits"
    )


def within_host(limits: LimitFlags, host_cpus: int) -> LimitFlags:
    """``limits`` with ``--cpus`` no larger than this host has.

    docker and apptainer refuse to start a container asked for more CPUs than
    the machine has ("Range of CPUs is from 0.01 to 2.00"), where natively the
    same step runs (core warns that it is larger than the run's budget, and
    runs it alone). A limit of every CPU there is, is what such a step gets
    anyway. Only for a run here: a compiled job runs on a node of its own size.
    """
    if limits.cpus is None or limits.cpus <= host_cpus:
        return limits
    flags = list(limits.flags)
    flags[flags.index("--cpus") + 1] = str(host_cpus)
    return replace(limits, flags=tuple(flags), cpus=float(host_cpus))
