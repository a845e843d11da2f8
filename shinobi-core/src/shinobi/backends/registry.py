"""Plugin discovery: the only module that talks to stevedore.

Core's own backends (native, venv) are registered in the same entry-point
group as plugins, so every listing shows them alike; loading one, though,
needs no discovery. Scanning the installed distributions and importing
stevedore to find a class of this very package cost a ``ninja run`` about
20 ms, a tenth of its start-up. A plugin that fails to import is reported and
skipped; it never takes the others down with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from shinobi.errors import BackendNotFound, did_you_mean

__all__ = [
    "BACKENDS",
    "CORE_ENTRY_POINTS",
    "KNOWN_PROVIDERS",
    "LAUNCHERS",
    "OFFLOAD",
    "PLANNED",
    "PluginInfo",
    "available",
    "describe",
    "load_plugin",
]

BACKENDS = "shinobi.backends"
OFFLOAD = "shinobi.offload"
LAUNCHERS = "shinobi.launchers"

#: Names shinobi knows about, and the distribution that provides each.
KNOWN_PROVIDERS: Mapping[str, Mapping[str, str]] = {
    BACKENDS: {
        "native": "shinobi-core",
        "venv": "shinobi-core",
        "docker": "shinobi-containers",
        "podman": "shinobi-containers",
        "apptainer": "shinobi-containers",
        "singularity": "shinobi-containers",
        "slurm": "shinobi-slurm",
        "kubernetes": "shinobi-k8s",
    },
    OFFLOAD: {"slurm": "shinobi-slurm"},
    LAUNCHERS: {"ssh": "shinobi-remote"},
}

#: Distributions of this monorepo that are planned but not implemented yet:
#: naming one must not send a user to ``pip install`` something that does nothing.
PLANNED = frozenset({"shinobi-k8s", "shinobi-remote"})

#: Core's own entry points, loaded without discovery (a test keeps this equal
#: to what shinobi-core's pyproject.toml registers).
CORE_ENTRY_POINTS: Mapping[tuple[str, str], str] = {
    (BACKENDS, "native"): "shinobi.backends.native:NativeBackend",
    (BACKENDS, "venv"): "shinobi.backends.venv:VenvBackend",
}

_KIND = {BACKENDS: "backend", OFFLOAD: "offload engine", LAUNCHERS: "launcher"}


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """One installed entry point: its name, where it comes from, and whether it loads."""

    group: str
    name: str
    distribution: str
    target: str
    error: str | None = None


@cache
def available(group: str) -> tuple[str, ...]:
    """Installed names in ``group``, without importing any plugin."""
    return tuple(sorted({ep.name for ep in entry_points(group=group)}))


def describe(group: str) -> list[PluginInfo]:
    """Every installed entry point of ``group``, loading each to report failures."""
    from stevedore import ExtensionManager

    failures: dict[str, str] = {}

    def on_failure(_manager: Any, ep: Any, exc: BaseException) -> None:
        failures[ep.name] = f"{type(exc).__name__}: {exc}"

    manager = ExtensionManager(
        namespace=group, invoke_on_load=False, on_load_failure_callback=on_failure
    )
    loaded = {ext.name: ext for ext in manager.extensions}
    infos: list[PluginInfo] = []
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        dist = ep.dist.name if ep.dist is not None else "?"
        infos.append(
            PluginInfo(
                group=group,
                name=ep.name,
                distribution=dist,
                target=ep.value,
                error=None if ep.name in loaded else failures.get(ep.name, "did not load"),
            )
        )
    return infos


def _not_found(group: str, name: str) -> BackendNotFound:
    kind = _KIND.get(group, "plugin")
    installed = available(group)
    provider = KNOWN_PROVIDERS.get(group, {}).get(name)
    if provider in PLANNED:
        return BackendNotFound(
            f"the {kind} {name!r} is not available yet: {provider} is planned but not"
            f" implemented (installed: {', '.join(installed) or 'none'})"
        )
    if provider is not None:
        return BackendNotFound(
            f"the {kind} {name!r} is not installed: the {provider} distribution provides it"
            f" (`pip install ./{provider}` from a shinobi checkout; installed:"
            f" {', '.join(installed) or 'none'})"
        )
    return BackendNotFound(
        f"unknown {kind} {name!r}{did_you_mean(name, installed)}"
        f" (installed: {', '.join(installed) or 'none'})"
    )


def check_name(group: str, name: str) -> None:
    """Raise :class:`BackendNotFound` unless ``name`` is installed in ``group``."""
    if (group, name) not in CORE_ENTRY_POINTS and name not in available(group):
        raise _not_found(group, name)


@cache
def load_plugin(group: str, name: str) -> Any:
    """The object an entry point names (a class, usually), imported on first use."""
    core = CORE_ENTRY_POINTS.get((group, name))
    if core is not None:
        module, _, attribute = core.partition(":")
        return getattr(import_module(module), attribute)
    check_name(group, name)
    from stevedore import DriverManager

    try:
        manager: Any = DriverManager(namespace=group, name=name, invoke_on_load=False)
    except Exception as exc:  # a broken plugin must not look like a missing one
        provider = KNOWN_PROVIDERS.get(group, {}).get(name, "its distribution")
        raise BackendNotFound(
            f"the {_KIND.get(group, 'plugin')} {name!r} is installed but failed to load"
            f" ({type(exc).__name__}: {exc}); reinstall {provider}"
        ) from exc
    return manager.driver
