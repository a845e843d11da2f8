"""Plugin discovery: the only module that talks to stevedore.

Core's own backends (native, venv) are registered in the same entry-point
group as plugins, so every listing shows them alike; loading one, though,
needs no discovery. Scanning the installed distributions and importing
stevedore to find a class of this very package cost a ``ninja run`` about
20 ms, a tenth of its start-up. A plugin that fails to import is reported and
skipped; it never takes the others down with it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import Any

from shinobi.errors import (
    BackendNotFound,
    PluginFault,
    ShinobiError,
    did_you_mean,
    exception_line,
)

__all__ = [
    "BACKENDS",
    "CORE_ENTRY_POINTS",
    "KNOWN_PROVIDERS",
    "LAUNCHERS",
    "OFFLOAD",
    "PLANNED",
    "PluginInfo",
    "available",
    "blame",
    "core_mismatch",
    "describe",
    "load_plugin",
    "make_plugin",
    "plugin_class",
    "plugin_code",
    "plugin_fault",
    "provider",
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
    #: What the user should do about ``error``, naming the distribution(s) concerned.
    fix: str | None = None
    #: What is worth knowing of one that loads (built for another shinobi-core).
    note: str | None = None


@cache
def available(group: str) -> tuple[str, ...]:
    """Installed names in ``group``, without importing any plugin."""
    from importlib.metadata import entry_points

    return tuple(sorted({ep.name for ep in entry_points(group=group)}))


def _distribution(ep: Any) -> str:
    return ep.dist.name if ep.dist is not None else "?"


def _providers(group: str, name: str) -> list[str]:
    """The installed distributions that register ``name`` in ``group``."""
    from importlib.metadata import entry_points

    return sorted({_distribution(ep) for ep in entry_points(group=group, name=name)})


def provider(group: str, name: str) -> str | None:
    """The distribution that registers ``name`` in ``group`` (the first, if several
    do), or None: the one to name when that plugin is at fault."""
    providers = _providers(group, name)
    return providers[0] if providers else None


def _reinstall(dist: str) -> str:
    """The fix for an entry point that is installed but does not import."""
    return f"reinstall {dist} with its dependencies"


def core_mismatch(dist: str) -> str | None:
    """Why the installed shinobi-core is not one ``dist`` declares it works with,
    and the fix: for one of ours, both from one checkout; for another's, a core
    it accepts or a release of it made for this core.

    pip keeps the two in step, but ``--no-deps``, an editable checkout of one
    of them, or a site environment upgraded piecemeal does not, and a plugin
    built against another core fails in ways that name neither version.
    None: it matches, or there is nothing to compare (no metadata). Looked
    into only where something is being diagnosed (``ninja backends``, a
    plugin that failed to load): parsing requirements imports ``packaging``.
    """
    from importlib.metadata import PackageNotFoundError, distribution, version

    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        requires = distribution(dist).requires or []
        core = version("shinobi-core")
    except PackageNotFoundError:
        return None
    for text in requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) != "shinobi-core":
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        if not requirement.specifier.contains(core, prereleases=True):
            needed = f"shinobi-core{requirement.specifier}"
            return f"{dist} needs {needed} but shinobi-core {core} is installed; " + (
                f"install both from one shinobi checkout (pip install ./shinobi-core ./{dist}),"
                f" or a {dist} built for {core}"
                if canonicalize_name(dist) in _OURS
                else f"install a shinobi-core {dist} accepts ({needed}), or a release of"
                f" {dist} made for shinobi-core {core}"
            )
    return None


#: The distributions of this monorepo: built from one checkout, with one another.
_OURS = frozenset(
    {"shinobi-core", *(d for names in KNOWN_PROVIDERS.values() for d in names.values())}
)


def _uninstall_all_but_one(dists: list[str]) -> str:
    """The fix for a name that several distributions register: stevedore refuses it."""
    return f"uninstall all but one of {', '.join(dists)}"


def _utf8(entry: str) -> bool:
    try:
        entry.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@contextmanager
def _stevedore_path() -> Iterator[None]:
    """Hide from stevedore the ``sys.path`` entries it cannot encode as UTF-8.

    stevedore keys its cache by a UTF-8 hash of ``sys.path``, and a recipe in
    a directory whose name is not UTF-8 (``/data/lat\xe9``) puts one there:
    every plugin then "failed to load", with advice to reinstall it. No plugin
    is installed in a recipe's directory, so such entries sit out the lookup;
    one that a plugin's import adds meanwhile stays.
    """
    if all(_utf8(entry) for entry in sys.path):
        yield
        return
    saved = list(sys.path)
    sys.path[:] = [entry for entry in saved if _utf8(entry)]
    kept = set(sys.path)
    try:
        yield
    finally:
        sys.path[:] = saved + [entry for entry in sys.path if entry not in kept]


def _load_error(group: str, name: str) -> str | None:
    """Why the entry point ``name`` of ``group`` does not import, or None if it does.

    Each name is loaded on its own: a plugin that calls ``sys.exit()`` at
    import (stevedore lets that through) ends only its own row.
    """
    from stevedore import NamedExtensionManager

    failures: list[str] = []

    def on_failure(_manager: Any, _ep: Any, exc: BaseException) -> None:
        failures.append(f"{type(exc).__name__}: {exc}")

    try:
        with _stevedore_path():
            manager = NamedExtensionManager(
                namespace=group,
                names=[name],
                invoke_on_load=False,
                on_load_failure_callback=on_failure,
            )
    except SystemExit as exc:
        return f"SystemExit: {exc}"
    if failures:
        return failures[0]
    return None if manager.extensions else "did not load"


def describe(group: str) -> list[PluginInfo]:
    """Every installed entry point of ``group``, loading each to report failures.

    A name that two distributions register cannot be loaded (which one would
    run is not defined), so each of its rows says so rather than "loads".
    """
    from importlib.metadata import entry_points

    found = sorted(entry_points(group=group), key=lambda e: (e.name, _distribution(e)))
    by_name: dict[str, list[str]] = {}
    for ep in found:
        by_name.setdefault(ep.name, []).append(_distribution(ep))
    infos: list[PluginInfo] = []
    for ep in found:
        dist = _distribution(ep)
        providers = by_name[ep.name]
        error: str | None = None
        fix: str | None = None
        note: str | None = None
        if (group, ep.name) in CORE_ENTRY_POINTS:
            if dist != "shinobi-core":  # core's own name: loaded without discovery, always
                error = f"{ep.name!r} is shinobi-core's own, so this entry point is never used"
                fix = f"uninstall {dist}, or drop its {ep.name!r} entry point"
        elif len(providers) > 1:
            others = ", ".join(p for p in providers if p != dist)
            error, fix = (
                f"{ep.name!r} is also provided by {others}",
                _uninstall_all_but_one(providers),
            )
        else:
            error = _load_error(group, ep.name)
            if error is not None:
                fix = _load_fix(dist, error)  # a core mismatch first, when there is one
            elif (mismatch := core_mismatch(dist)) is not None:  # it loads: said, not failed
                note = f"built for another shinobi-core: {mismatch}"
        infos.append(PluginInfo(group, ep.name, dist, ep.value, error, fix, note))
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
    known = sorted({*installed, *KNOWN_PROVIDERS.get(group, {})})
    return BackendNotFound(
        f"unknown {kind} {name!r}{did_you_mean(name, known)}"
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
        with _stevedore_path():
            manager: Any = DriverManager(namespace=group, name=name, invoke_on_load=False)
    # A broken plugin must not look like a missing one, nor end ninja by exiting.
    except (Exception, SystemExit) as exc:
        raise _load_failure(group, name, exc) from exc
    return manager.driver


def _load_failure(group: str, name: str, exc: BaseException) -> BackendNotFound:
    """The one-line error for an installed entry point that does not load.

    Looked into only once loading failed, so a successful load scans the
    installed distributions no more than stevedore itself does.
    """
    kind = _KIND.get(group, "plugin")
    providers = _providers(group, name)
    if len(providers) > 1:  # stevedore's MultipleMatches, with the distributions named
        return BackendNotFound(
            f"the {kind} {name!r} is installed but failed to load (MultipleMatches:"
            f" {', '.join(providers)} all provide it); {_uninstall_all_but_one(providers)}"
        )
    dist = providers[0] if providers else "its distribution"
    said = f"{type(exc).__name__}: {exc}"
    fix = _load_fix(dist, said) if providers else _reinstall(dist)
    return BackendNotFound(f"the {kind} {name!r} is installed but failed to load ({said}); {fix}")


#: An import of shinobi's own that failed: the plugin was built against another core.
_CORE_IMPORT = re.compile(r"^(ImportError|ModuleNotFoundError): .*'shinobi[.']")


def _load_fix(dist: str, said: str) -> str:
    """The fix for ``dist``'s entry point that failed to load (``said``: the error).

    A plugin that cannot import a name of shinobi's own was made for another
    shinobi-core, whatever the versions say: two checkouts of this monorepo
    carry one version number, so a plugin reinstalled from a newer one over an
    older core met its requirement, and "reinstall it" changed nothing.
    """
    mismatch = core_mismatch(dist)
    if mismatch is not None:
        return mismatch
    if not _CORE_IMPORT.match(said):
        return _reinstall(dist)
    from importlib.metadata import version

    from packaging.utils import canonicalize_name

    core = version("shinobi-core")
    if canonicalize_name(dist) in _OURS:
        return (
            f"{dist} and the installed shinobi-core {core} come from different checkouts:"
            f" install both from one (pip install ./shinobi-core ./{dist})"
        )
    return f"{dist} was made for another shinobi-core: install a release of it made for {core}"


def _mismatch_note(dist: str | None) -> str:
    """`` (built for another shinobi-core: ...)`` when ``dist`` was, else nothing."""
    mismatch = core_mismatch(dist) if dist else None
    return f" (built for another shinobi-core: {mismatch})" if mismatch else ""


def plugin_fault(name: str, why: str, group: str = BACKENDS) -> BackendNotFound:
    """The one-line error for an entry point that loads but is no usable plugin,
    naming the distribution to blame (exit 2, like one that does not load)."""
    kind = _KIND.get(group, "plugin")
    found = provider(group, name)
    dist = found or "its distribution"
    return BackendNotFound(
        f"the {kind} {name!r} is installed but unusable: {why}; it is {dist}'s to mend"
        f" (uninstall {dist}, or install a release of it that works){_mismatch_note(found)}"
    )


def blame(
    group: str, name: str, what: str, dist: str | None = None, not_of: str | None = None
) -> str:
    """One line: the plugin ``name`` of ``group`` did ``what``, a fault to report to
    the authors of ``dist`` (by default the distribution that registers it)."""
    kind = _KIND.get(group, "plugin")
    found = dist or provider(group, name)
    source = found or "its distribution"
    besides = f", not of {not_of}" if not_of else ""
    return (
        f"{kind} {name!r} ({source}) {what}: a fault of that {kind}{besides};"
        f" report it to {source}'s authors{_mismatch_note(found)}"
    )


@contextmanager
def plugin_code(group: str, name: str, method: str) -> Iterator[None]:
    """Around a call of the plugin's own ``method`` (its constructor, ``check()``,
    ``submit()``): what it raises is a :class:`PluginFault` naming the plugin and
    its distribution, not ninja's internal error (exit 70, "please report it").
    A :class:`ShinobiError` passes as it is: a refusal in the plugin's own words
    (a ``ConfigError`` of its settings keeps naming the file that set them).
    """
    try:
        yield
    except ShinobiError:
        raise
    except Exception as exc:
        raise PluginFault(
            blame(group, name, f"raised {exception_line(exc)} in its {method}")
        ) from exc


def plugin_class(group: str, name: str, base: type) -> type:
    """The class the entry point ``name`` of ``group`` names, which must be a
    subclass of ``base``: anything else is the plugin's mistake (exit 2)."""
    cls = load_plugin(group, name)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise plugin_fault(
            name, f"it names {cls!r}, which is not a shinobi {base.__name__} class", group
        )
    declared = getattr(base, "capabilities", None)
    given = getattr(cls, "capabilities", None)
    if declared is not None and not isinstance(given, type(declared)):
        # read before every step: a wrong one failed each as ninja's internal error
        kind = type(declared).__name__
        raise plugin_fault(name, f"its capabilities are {given!r}, not {kind}(...)", group)
    return cls


def make_plugin(group: str, name: str, base: type, settings: Mapping[str, Any]) -> Any:
    """The plugin ``name`` of ``group``, made with ``settings``.

    What a plugin registered may not be usable: not a subclass of ``base``,
    abstract, or a constructor that raises TypeError. That is the plugin's
    mistake, said as such (exit 2), not an internal error of ninja; so is a
    constructor that raises anything else (see :func:`plugin_code`). A class
    that sets no ``name`` gets ``name`` (see :func:`_named`).
    """
    cls = plugin_class(group, name, base)
    with plugin_code(group, name, "constructor"):
        try:
            made = cls(settings)  # a plugin class takes its settings
        except TypeError as exc:
            raise plugin_fault(name, f"it cannot be made ({exc})", group) from None
    return _named(made, name)


def _named(made: Any, name: str) -> Any:
    """``made``, named ``name`` (the entry point's) when its class sets no ``name``.

    Core reads a plugin's ``name`` (which backend ran a step, whose fault a
    failure is): a class that left it out passed ``ninja backends`` and the
    conformance kit, then failed every step with an AttributeError.
    """
    if not isinstance(getattr(made, "name", None), str):
        made.name = name
    return made
