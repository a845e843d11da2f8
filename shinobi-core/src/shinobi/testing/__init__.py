"""Test support shipped with core, so every plugin reuses it without path hacks.

``shinobi.testing.conformance.BackendConformance`` is the behavioural suite
every backend passes; ``shinobi.testing.plugin`` (a pytest plugin registered
by core) adds the ``live_engine`` helper that fails in CI when an engine that
should be there is not, and skips elsewhere.
"""

from __future__ import annotations

__all__ = ["conformance", "plugin"]
