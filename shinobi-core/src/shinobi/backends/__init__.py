"""Backends run a step's invocation somewhere; :func:`get_backend` finds one by name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shinobi.backends.base import Backend

__all__ = ["available_backends", "get_backend"]


def get_backend(name: str, settings: Mapping[str, Any] | None = None) -> Backend:
    """A backend instance by name (``native``, ``venv``, ``docker``, ``slurm``, ...).

    ``settings`` defaults to the effective configuration's table for that backend.
    """
    from shinobi.backends.base import Backend
    from shinobi.backends.registry import BACKENDS, make_plugin

    if settings is not None:
        made: Backend = make_plugin(BACKENDS, name, Backend, settings)
        return made
    from shinobi.config import load_config

    config = load_config()
    backend: Backend = make_plugin(BACKENDS, name, Backend, config.backend_settings(name))
    config.check_backend_table(name, backend.settings_keys)
    return backend


def available_backends() -> tuple[str, ...]:
    """Names of the installed backends, without importing any of them."""
    from shinobi.backends.registry import BACKENDS, available

    return available(BACKENDS)
