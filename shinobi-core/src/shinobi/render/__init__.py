"""Drawing plans and graphs for people and for other tools (dot, mermaid, json)."""

from __future__ import annotations

__all__: list[str] = []
