"""field_values reads a plain model's __dict__ in one call: it must give what
``dict(iter(model))`` gives for every kind of model, not only the plain one."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, RootModel, field_validator

from shinobi.steps.types import field_values


class Plain(BaseModel):
    ms: Path
    n: int = 2


class Extra(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int


class Private(BaseModel):
    a: int
    _hidden: int = PrivateAttr(default=3)


class Cached(BaseModel):
    a: int

    @cached_property
    def doubled(self) -> int:
        return self.a * 2


class OwnIter(BaseModel):
    a: int
    b: int

    def __iter__(self) -> Any:  # a model that chose what it yields
        yield ("a", self.a)


class Rewritten(BaseModel):
    a: str

    @field_validator("a")
    @classmethod
    def upper(cls, value: str) -> str:
        return value.upper()


def _cases() -> list[BaseModel]:
    cached = Cached(a=1)
    _ = cached.doubled  # now in its __dict__, which pydantic's iterator yields too
    return [
        Plain(ms=Path("a.ms")),
        Extra(a=1, b=2, c=[3]),
        Extra(a=1),
        Private(a=1),
        cached,
        OwnIter(a=1, b=2),
        Rewritten(a="x"),
        RootModel[int](5),
        Plain.model_construct(ms=Path("m")),  # no default filled: fewer keys than fields
    ]


def test_field_values_is_dict_of_the_iterator() -> None:
    for model in _cases():
        got = field_values(model)
        assert got == dict(iter(model)), model
        assert list(got) == [k for k, _ in iter(model)], model  # same order


def test_field_values_is_a_copy() -> None:
    model = Plain(ms=Path("a.ms"))
    got = field_values(model)
    got["n"] = 9
    assert model.n == 2
    assert got["ms"] is model.ms  # the values themselves, not copies
