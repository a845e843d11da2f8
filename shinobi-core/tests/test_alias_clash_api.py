"""run_recipe() refuses an alias that names another input, as the command line does.

The Python API validated by name and by alias like the command line, so the
key ``begin`` set both ``start`` (aliased ``begin``) and the field ``begin``,
and the run went on with both changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import AliasChoices, BaseModel, Field

from shinobi.errors import UsageError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, InputRef, ParamMeta, Recipe, StepRef


class Win(BaseModel):
    start: int = Field(0, alias="begin")
    begin: int = 100


class Shared(BaseModel):
    start: int = Field(0, alias="s")
    stop: int = Field(1, validation_alias=AliasChoices("stop", "s"))


class Plain(BaseModel):
    start: int = Field(0, alias="s", validation_alias="s")
    stop: int = 1


class EchoIn(BaseModel):
    words: list[int] = []


class Out(BaseModel):
    pass


ECHO = Cab("echo", ["echo"], EchoIn, Out, {"words": ParamMeta(positional=True)})


def _pipe(model: type[BaseModel], first: str, second: str) -> Recipe:
    wiring = {"words": [InputRef(field=first), InputRef(field=second)]}
    return Recipe(
        name="r",
        inputs_model=model,
        outputs_model=Out,
        steps=[StepRef(name="say", step=ECHO, wiring=wiring)],
    )


@pytest.mark.parametrize(
    ("model", "fields", "given", "said"),
    [
        (Win, ("start", "begin"), {"begin": 5}, "the name of input 'begin'"),
        (Shared, ("start", "stop"), {"s": 5}, "an alias of input 'start'"),
    ],
)
def test_an_ambiguous_alias_is_refused_from_python(
    tmp_path: Path,
    model: type[BaseModel],
    fields: tuple[str, str],
    given: dict[str, int],
    said: str,
) -> None:
    with pytest.raises(UsageError, match="rename the alias or the field") as caught:
        run_recipe(_pipe(model, *fields), given, cwd=tmp_path)
    assert said in str(caught.value)
    assert not list(tmp_path.iterdir())  # refused before anything ran


def test_one_alias_spelled_twice_is_no_clash(tmp_path: Path) -> None:
    result = run_recipe(_pipe(Plain, "start", "stop"), {"s": 5}, cwd=tmp_path)
    assert result.ok, result.error
