"""Values as strict JSON has them: the floats JSON cannot write, as text.

Python's ``json`` writes ``NaN`` and ``Infinity``, which are not JSON and
which strict parsers (``jq``, browsers, most languages) refuse; a step's
outputs may well hold them (a flux that could not be measured). Every
document ninja writes for programs (``--json``, the run manifest) writes them
as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``, as protobuf's
JSON mapping does, so the value is kept and the document parses.

Those documents (and ``ninja report``, which reads the manifest) hold values
as data, by :func:`json_data`: a pydantic model as its JSON dump, a set as a
sorted list, a path as its text. Python's ``str()`` of a model
(``solint=3 mode='p'``) or a set (``{'b', 'a'}``) could not be fed back to
``--sol`` or ``run_recipe()``, which a record of a run's inputs is for.
"""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import Any

__all__ = ["finite", "finite_float", "json_data"]

_SCALARS = (str, int, bool, type(None))


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


def json_data(value: Any) -> Any:
    """``value`` as JSON data, for a document a program reads back.

    The common shapes (strings, numbers, paths, lists and dicts of them: a
    step's argv and outputs) are converted here without a JSON round trip,
    since this runs for every step of a run. A pydantic model becomes its
    ``model_dump(mode="json")`` (a secret stays masked), a set a sorted list
    (its order would change from run to run), other objects what pydantic
    writes for them (an enum's value, a date in ISO 8601), or their ``str()``.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        return finite_float(value)
    if kind is list or kind is tuple:
        return [json_data(item) for item in value]
    if kind is dict:
        return {_json_key(key): json_data(item) for key, item in value.items()}
    return _json_object(value)


def _json_object(value: Any) -> Any:
    """What :func:`json_data` gives for anything but plain data."""
    if isinstance(value, PurePath):  # the common case: a step's argv and outputs
        return str(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, set | frozenset):
        return _sorted([json_data(item) for item in value])
    if isinstance(value, list | tuple):
        return [json_data(item) for item in value]
    if isinstance(value, dict):
        return {_json_key(key): json_data(item) for key, item in value.items()}
    return _pydantic_json(value)  # a model, an enum, a date, a str subclass ...


def _pydantic_json(value: Any) -> Any:
    """``value`` as pydantic writes it in JSON mode; its ``str()`` if pydantic cannot."""
    from pydantic import BaseModel
    from pydantic_core import to_jsonable_python

    try:
        if isinstance(value, BaseModel):
            return finite(value.model_dump(mode="json"))
        return finite(to_jsonable_python(value, fallback=str))
    except Exception:  # a serialiser of the user's raised: the text still says it
        return str(value)


def _sorted(items: list[Any]) -> list[Any]:
    """``items`` in order, or ordered by their JSON text if they do not compare."""
    try:
        return sorted(items)
    except TypeError:  # mixed types, dicts
        import json

        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True, default=str))


def _json_key(key: Any) -> str:
    """A dict key as JSON writes it: keys are text there."""
    if type(key) is str:
        return key
    if type(key) in (int, float, bool, type(None)):
        import json

        return json.dumps(key)  # 1, 1.5, true, null, NaN: as json.dumps writes the key
    shown = json_data(key)
    return shown if isinstance(shown, str) else str(shown)
