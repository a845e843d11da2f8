"""Refusals a container backend raises before anything runs.

Each is a :class:`shinobi.errors.ShinobiError`, so the CLI prints its message
as one line (naming the problem and the fix) instead of a traceback.
"""

from __future__ import annotations

from shinobi.errors import ENVIRONMENT_EXIT, ConfigError, ShinobiError

__all__ = [
    "DOCKER_DAEMON_FIX",
    "ContainerRefused",
    "ContainerStopFailed",
    "EngineMissing",
    "EngineUnreachable",
    "ImageUnavailable",
    "MountRefused",
    "SettingsInvalid",
]


#: What to do when the docker client cannot reach its daemon, before a run or in one.
DOCKER_DAEMON_FIX = "start it, or point DOCKER_HOST at a running one"


class ContainerRefused(ShinobiError):
    """A step cannot be run in a container as declared."""


class MountRefused(ContainerRefused):
    """No arrangement of bind mounts honours what the cab declares about its paths."""


class ImageUnavailable(ContainerRefused):
    """The step's image is missing, or cannot be pinned to a digest."""


class SettingsInvalid(ContainerRefused, ConfigError):
    """A ``[backend.NAME]`` setting has a value the backend cannot use.

    A :class:`ConfigError`, so the CLI names the file or variable that set it.
    """


class EngineMissing(ContainerRefused):
    """The engine's program is not installed here (74): the machine's problem,
    as ``sbatch`` missing is for Slurm. A ``binary`` a setting names that is
    not there is :class:`SettingsInvalid` instead (2): a setting to mend."""

    exit_code = ENVIRONMENT_EXIT


class EngineUnreachable(ShinobiError):
    """The engine's daemon did not answer: the machine's problem, not the recipe's (74)."""

    exit_code = ENVIRONMENT_EXIT


class ContainerStopFailed(ShinobiError):
    """The engine would not remove a container that may still be running."""
