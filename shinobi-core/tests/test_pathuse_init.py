"""PathUse's hand-written __init__ (stores through its slots, for speed) must stay
the dataclass's own in every way a caller sees."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from shinobi.backends.base import PathUse


def _as_the_dataclass_writes_it() -> type:
    """A frozen slotted dataclass of PathUse's fields, with the generated __init__."""
    fields = [(f.name, f.type, f) for f in dataclasses.fields(PathUse)]
    copies = [
        (name, kind, dataclasses.field(default=f.default))
        if f.default is not dataclasses.MISSING
        else (name, kind)
        for name, kind, f in fields
    ]
    return dataclasses.make_dataclass("PathUse", copies, frozen=True, slots=True)


def test_the_signature_is_the_one_the_dataclass_would_write() -> None:
    generated = _as_the_dataclass_writes_it()
    mine = inspect.signature(PathUse.__init__).parameters
    assert mine == inspect.signature(generated.__init__).parameters  # type: ignore[misc]


def test_every_field_is_stored_and_the_instance_stays_frozen() -> None:
    use = PathUse("/d/x", "input", "ms", "dir", False, True, True)
    assert dataclasses.astuple(use) == ("/d/x", "input", "ms", "dir", False, True, True)
    assert PathUse("/d/x", "output", "out") == PathUse(
        path="/d/x", role="output", field="out", kind="any", writable=True, mutable=False
    )
    assert hash(PathUse("/a", "input", "f")) == hash(PathUse("/a", "input", "f"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        use.path = "/elsewhere"  # type: ignore[misc]
    assert dataclasses.replace(use, kind="file").kind == "file"
    assert repr(PathUse("/a", "input", "f")) == (
        "PathUse(path='/a', role='input', field='f', kind='any', writable=True,"
        " mutable=False, pattern=False)"
    )
