"""Detached launches: the handle file each one leaves, the per-user index of them,
and the interface that rebuilds their state by asking the engine.

Nothing keeps running locally after a launch; ``ninja status``, ``runs``,
``logs``, ``cancel`` and ``clean`` read a handle and ask the plugin named in
it. ``ninja compile --submit`` and ``ninja run --remote`` both write handles
through :func:`shinobi.launch.handle.write_handle` and record them with
:func:`shinobi.launch.index.record_launch`.
"""

from __future__ import annotations

__all__ = ["cleanup", "find", "folders", "handle", "index", "render", "state", "tracking"]
