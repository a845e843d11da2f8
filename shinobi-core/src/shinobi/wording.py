"""Small pieces of wording shared by everything that prints counts to people."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["counted", "input_option", "listed"]

_T = TypeVar("_T")


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``1 step``, ``2 steps``: a count with its noun in the right number.

    ``plural`` is for nouns that do not just take an ``s`` (``entry``).
    """
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def input_option(field: str) -> str:
    """The option ``ninja run`` gives a recipe input first: ``niter_`` is ``--niter``
    (a trailing ``_`` is how a model spells a keyword or a BaseModel name), and
    ``n_iter`` ``--n-iter``. An input that clashes with one of ninja's own
    options is ``--input-...`` instead (see :mod:`shinobi.cli.recipe_options`)."""
    return "--" + (field.rstrip("_") or field).replace("_", "-")


def listed(items: Sequence[_T], most: int, show: Callable[[_T], str] = str) -> str:
    """``a, b, c and 4 more``: the first ``most`` of ``items`` (each as ``show``
    says), the rest counted, so a message about thousands of slices, jobs or
    runs stays one line."""
    shown = ", ".join(show(item) for item in items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")
