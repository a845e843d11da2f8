"""Steps whose outputs are declared one of each kind, for the tests of build_graph's
declared-type checks (test_typecheck_recipe_outputs: recipe outputs;
test_typecheck_step_inputs: step inputs), which wire them into fields of
every type."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

import shinobi
from shinobi.steps import MS, Directory, File

__all__ = ["CLASHES", "Base", "HasSub", "Made", "NoIn", "Sub", "make", "slices", "sub"]


class NoIn(BaseModel):
    pass


class Made(BaseModel):
    n: int = 1
    s: str = ""
    f: File | None = None
    d: Directory | None = None
    ms: MS | None = None
    fs: list[File] = []
    ns: list[int] = []
    x: Any = None


@shinobi.pystep
def make() -> Made:
    return Made()


@shinobi.pystep
def slices(i: int) -> Made:
    return Made(n=i)


class Base(BaseModel):
    a: int = 0


class Sub(Base):
    b: int = 0


class HasSub(BaseModel):
    m: Sub = Sub()


@shinobi.pystep
def sub() -> HasSub:
    return HasSub()


#: (a field's declared type, the field of :class:`Made` wired to it, the two as an
#: error names them): the clashes either check refuses, whatever the value.
CLASHES: list[tuple[Any, str, str, str]] = [
    (int, "f", "int", "File"),  # a path is never a number
    (File, "n", "File", "int"),  # nor a number a path
    (File, "fs", "File", "list[File]"),  # a list into one value
    (list[File], "f", "list[File]", "File"),  # one value into a list
    (File, "d", "File", "Directory"),  # the other kind on disk
    (Directory, "f", "Directory", "File"),
    (File, "ms", "File", "MS"),  # an MS is a directory
    (str | None, "n", "str", "int"),  # None aside, the declarations clash
]
