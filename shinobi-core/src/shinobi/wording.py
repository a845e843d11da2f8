"""Small pieces of wording shared by everything that prints counts to people."""

from __future__ import annotations

__all__ = ["counted", "input_option"]


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
