"""The configuration keys a container backend reads, checked once.

A backend's settings are the ``[backend.NAME]`` table merged over the global
``backend`` keys (see ``shinobi.config.AppConfig.backend_settings``); keys
that belong to other backends are ignored. A wrong value is refused with a
one-line message naming the key, rather than failing later inside a run.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, get_args

from shinobi_containers.errors import SettingsInvalid
from shinobi_containers.limits import EnforceMode

__all__ = ["LIMIT_FLAGS", "SETTINGS_KEYS", "ContainerSettings", "flags_of", "limit_flags_in"]


@dataclass(frozen=True, slots=True)
class ContainerSettings:
    """What every container backend reads from its settings.

    binary: the engine's CLI (default: the engine's own name, found on PATH).
    run_as_host_user: docker/podman run as the invoking user (``--user UID:GID``)
        so outputs on bind mounts are the user's, not root's.
    enforce_resources: ``auto`` | ``always`` | ``never`` (see :mod:`limits`).
    pin_image: run the image by digest and report it (core sets it with provenance).
    network: docker/podman ``--network`` (e.g. ``none``); default: the engine's.
    init: docker/podman ``--init``, so the payload is not PID 1 and dies of the
        signals sent to it, as it would outside a container.
    run_flags: extra arguments for ``run``/``exec``, before the image.
    memory_stall_timeout: seconds a step may sit at its memory limit making no
        progress before it is killed as out of memory (0: never; see :mod:`stall`).
    """

    binary: str
    run_as_host_user: bool = True
    enforce_resources: EnforceMode = "auto"
    pin_image: bool = False
    network: str | None = None
    init: bool = True
    run_flags: tuple[str, ...] = ()
    memory_stall_timeout: float = 30.0

    @classmethod
    def from_mapping(cls, backend: str, settings: Mapping[str, Any]) -> ContainerSettings:
        def bad(key: str, expected: str) -> SettingsInvalid:
            # the CLI adds the file or variable that set it (shinobi.config.said_where)
            return SettingsInvalid(
                f"backend.{backend}.{key} must be {expected}, not {settings[key]!r}"
            )

        def flag(key: str, default: bool) -> bool:
            # read as the global keys are: 0, "yes", "off" mean what they mean there
            from shinobi.config import config_bool

            try:
                return config_bool(settings.get(key, default))
            except ValueError:
                raise bad(key, "true or false (or yes/no, on/off, 1/0)") from None

        def text(key: str, default: str | None) -> str | None:
            value = settings.get(key, default)
            if value is not None and (not isinstance(value, str) or not value):
                raise bad(key, "a non-empty string")
            return value

        mode = settings.get("enforce_resources", "auto")
        if mode not in get_args(EnforceMode):
            raise bad("enforce_resources", '"auto", "always" or "never"')
        raw_flags = settings.get("run_flags", ())
        if isinstance(raw_flags, str):
            try:
                run_flags = tuple(shlex.split(raw_flags))
            except ValueError:
                raise bad("run_flags", "words a shell could split (balance its quotes)") from None
        elif isinstance(raw_flags, list | tuple) and all(isinstance(f, str) for f in raw_flags):
            run_flags = tuple(raw_flags)
        else:
            raise bad("run_flags", "a list of strings or one string")
        owned = next((f for f in run_flags if _takes_over(f)), None)
        if owned is not None:
            taken = owned.split("=", 1)[0]
            raise SettingsInvalid(
                f"backend.{backend}.run_flags sets {taken}, which ninja keeps to itself:"
                f" {_OWN_FLAGS.get(taken, _OWN_FLAGS['-d'])}; drop it from run_flags"
            )
        limiting = limit_flags_in(run_flags, backend)
        if mode == "always" and limiting:
            first, limit = next(iter(limiting.items()))
            raise SettingsInvalid(
                f"backend.{backend}.run_flags sets {first}, which would override the"
                f" {limit} limit a step declares, and enforce_resources is"
                ' "always": drop it from run_flags (declare the limit on the step), or set'
                ' enforce_resources to "auto" to let run_flags win, with a warning'
            )
        stall = settings.get("memory_stall_timeout", 30.0)
        if isinstance(stall, bool) or not isinstance(stall, int | float) or not stall >= 0:
            raise bad("memory_stall_timeout", "a number of seconds, 0 or more")
        return cls(
            binary=text("binary", backend) or backend,
            run_as_host_user=flag("run_as_host_user", True),
            enforce_resources=mode,
            pin_image=flag("pin_image", False),
            network=text("network", None),
            init=flag("init", True),
            run_flags=run_flags,
            memory_stall_timeout=float(stall),
        )


#: ``run`` flags ninja relies on owning, and why.
_OWN_FLAGS = {
    "--name": "each container's name is how ninja stops and removes it",
    "-d": "a detached container would outlive its step",
    "--detach": "a detached container would outlive its step",
    "--rm": "ninja removes each container itself once it has read whether the engine"
    " killed it for memory; removed by the engine first, an out-of-memory kill goes unseen"
    " and the step passes",
}

#: ``run`` flags that set a limit ninja sets itself from a step's declared
#: resources (docker, podman and apptainer spell them alike), and which limit.
#: Given after ninja's own, the engine keeps the last: the declared limit was
#: replaced without a word. (``--cpu-quota`` and ``--cpu-period`` are left out:
#: the engines refuse them beside ``--cpus``, loudly.)
LIMIT_FLAGS = {"--memory": "memory", "--memory-swap": "memory", "--cpus": "cpu"}
#: docker's and podman's short ``--memory``; apptainer has no ``-m`` (it refuses it).
_OCI_LIMIT_FLAGS = {**LIMIT_FLAGS, "-m": "memory"}
_OCI_ENGINES = frozenset({"docker", "podman"})

#: Short flags of ``run`` that take no value, and so may be bundled (``-dit``).
_NO_VALUE = frozenset("ditP")


def flags_of(word: str) -> tuple[str, ...]:
    """The options ``word`` of ``run_flags`` gives, as their names: ``--memory=1g``
    is ``--memory``; a bundle of short ones (``-dit``, ``-itm1g``) is each of its
    letters, the first one that is not a switch taking the rest as its value."""
    if word.startswith("--"):
        return (word.split("=", 1)[0],)
    if not word.startswith("-") or len(word) < 2:
        return ()
    letters = []
    for letter in word[1:]:
        if not letter.isalpha():
            break
        letters.append(f"-{letter}")
        if letter not in _NO_VALUE:
            break  # it takes a value: the rest of the word (-m1g, -edummy=1)
    return tuple(letters)


def limit_flags_in(run_flags: tuple[str, ...], engine: str) -> dict[str, str]:
    """Each option of ``run_flags`` that sets a limit ninja sets (:data:`LIMIT_FLAGS`,
    and ``-m`` for docker and podman), as written, and the limit it sets (``memory``
    or ``cpu``)."""
    known = _OCI_LIMIT_FLAGS if engine in _OCI_ENGINES else LIMIT_FLAGS
    given = (flag for word in run_flags for flag in flags_of(word))
    return {flag: known[flag] for flag in given if flag in known}


def _takes_over(word: str) -> bool:
    """Whether ``word`` is one of :data:`_OWN_FLAGS`, alone or bundled (``-td``)."""
    return any(flag in _OWN_FLAGS for flag in flags_of(word))


#: The keys of a container backend's ``[backend.NAME]`` table.
SETTINGS_KEYS = frozenset(f.name for f in fields(ContainerSettings))
