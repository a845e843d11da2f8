"""Test support shipped with core, so every plugin reuses it without path hacks.

``shinobi.testing.conformance.BackendConformance`` is the behavioural suite
every backend passes; ``shinobi.testing.plugin`` (a pytest plugin registered
by core) adds the ``require_engine`` and ``require_backend`` helpers, which
fail in CI when an engine that should be there is not, and skip elsewhere.
"""

from __future__ import annotations

__all__ = ["conformance", "plugin"]
