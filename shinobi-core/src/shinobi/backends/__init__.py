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
    from shinobi.backends.registry import BACKENDS, load_plugin

    cls = load_plugin(BACKENDS, name)
    if settings is None:
        from shinobi.config import load_config

        settings = load_config().backend_settings(name)
    backend: Backend = cls(settings)
    return backend


def available_backends() -> tuple[str, ...]:
    """Names of the installed backends, without importing any of them."""
    from shinobi.backends.registry import BACKENDS, available

    return available(BACKENDS)
