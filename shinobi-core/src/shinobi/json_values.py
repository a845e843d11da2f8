"""Values as strict JSON has them: the floats JSON cannot write, as text.

Python's ``json`` writes ``NaN`` and ``Infinity``, which are not JSON and
which strict parsers (``jq``, browsers, most languages) refuse; a step's
outputs may well hold them (a flux that could not be measured). Every
document ninja writes for programs (``--json``, the run manifest) writes them
as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``, as protobuf's
JSON mapping does, so the value is kept and the document parses.
"""

from __future__ import annotations

from typing import Any

__all__ = ["finite", "finite_float"]


def finite_float(value: float) -> float | str:
    """``value``, or its name if JSON has no number for it."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def finite(value: Any) -> Any:
    """``value`` with every float JSON cannot write, at any depth, as its name."""
    if isinstance(value, float):
        return finite_float(value)
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
