"""Small pieces of wording shared by everything that prints counts to people."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``1 step``, ``2 steps``: a count with its noun in the right number.

    ``plural`` is for nouns that do not just take an ``s`` (``entry``).
    """
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"
