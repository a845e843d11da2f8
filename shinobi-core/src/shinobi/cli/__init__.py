"""The ``ninja`` command line: one module per command, each imported only when used."""

from __future__ import annotations

__all__: list[str] = []
