"""The shortcuts of the per-step planning helpers say what the general code says."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, SecretStr

from shinobi.steps.argv import _dir_prefix, has_secret, secret_inputs
from shinobi.steps.types import field_values


@pytest.mark.parametrize("cwd", ["", "/", "/work", "/work/", "rel", "rel/dir//"])
def test_dir_prefix_is_join_with_nothing(cwd: str) -> None:
    assert _dir_prefix(cwd) == os.path.join(cwd, "")
    assert _dir_prefix(cwd) + "f.txt" == os.path.join(cwd, "f.txt")


class _Plain(BaseModel):
    a: int = 1
    b: Path | None = None


class _Extra(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int = 1


class _OwnIter(BaseModel):
    a: int = 1

    def __iter__(self) -> Any:  # type: ignore[override]
        yield ("a", self.a * 10)


@pytest.mark.parametrize("model", [_Plain(b=Path("x")), _Extra(a=2, c=3), _OwnIter(a=2)], ids=repr)
def test_field_values_is_dict_of_the_model(model: BaseModel) -> None:
    assert field_values(model) == dict(model)
    assert list(field_values(model)) == list(dict(model))


def test_plain_values_hold_no_secret() -> None:
    secret = SecretStr("pw")
    plain = {"s": "text", "n": 3, "f": 1.5, "b": True, "none": None, "p": Path("x")}
    assert not has_secret(plain)
    assert secret_inputs(plain) == ()
    assert has_secret({**plain, "k": secret})
    assert has_secret({**plain, "k": [1, secret]})
    assert secret_inputs({**plain, "k": [secret], "j": secret}) == (secret, secret)
