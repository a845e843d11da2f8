"""Exceptions that carry a message meant for the person at the terminal.

Every error a user can cause derives from :class:`ShinobiError`; the CLI prints
its message as one line and exits with ``exit_code`` instead of a traceback.
"""

from __future__ import annotations

__all__ = [
    "BackendNotFound",
    "ConfigError",
    "LoadError",
    "RecipeGraphError",
    "ShinobiError",
    "StepFailed",
    "UsageError",
]


class ShinobiError(Exception):
    """An error whose message names the problem and the fix."""

    exit_code = 2


class UsageError(ShinobiError):
    """Bad command-line input."""


class LoadError(ShinobiError):
    """A recipe target could not be loaded (missing file, attribute, syntax error)."""


class ConfigError(ShinobiError):
    """A configuration file or SHINOBI_* variable is invalid."""


class RecipeGraphError(ShinobiError):
    """A recipe's wiring is invalid: raised by build_graph before anything runs."""


class BackendNotFound(ShinobiError):
    """A backend name is unknown or its distribution is not installed."""


class StepFailed(ShinobiError):
    """A step exited non-zero, was killed, or raised."""

    exit_code = 1
