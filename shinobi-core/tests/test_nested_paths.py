"""Paths a step is given inside a mapping or a model are seen as paths are.

A cab that takes ``dict[str, File]`` (skipped on the command line, used in
templates) or a model holding ``File`` fields reads those files as surely as
one given a ``File``: their content keys the step cache, and a container
backend must see them. Such a value has no command-line form, though: its
text would be Python's repr, which is refused where the cab is declared.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.config import load_config
from shinobi.pyrunner.request import _path_uses
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe, pystep
from shinobi.steps.argv import path_uses
from shinobi.steps.types import File, fields_of, paths_within


class Pair(BaseModel):
    a: File
    b: File


class NestedIn(BaseModel):
    mapping: dict[str, File] = {}
    pair: Pair | None = None
    either: Path | str | None = None
    label: str = "x"


NESTED_META = {name: ParamMeta(skip=True) for name in ("mapping", "pair")}


def test_paths_inside_mappings_models_and_unions_are_path_uses() -> None:
    cab = Cab("t", "/bin/true", NestedIn, None, NESTED_META)
    values = dict(
        NestedIn(
            mapping={"k": Path("m1"), "j": Path("/abs/m2")},
            pair={"a": "p1", "b": "p2"},
            either=Path("e1"),
        )
    )
    uses = path_uses(cab, values, {}, "/work")
    assert [(u.path, u.role, u.field) for u in uses] == [
        ("/work/m1", "input", "mapping"),
        ("/abs/m2", "input", "mapping"),
        ("/work/p1", "input", "pair"),
        ("/work/p2", "input", "pair"),
        ("/work/e1", "input", "either"),
    ]


def test_a_field_that_holds_no_path_is_not_walked() -> None:
    specs = fields_of(NestedIn)
    assert [n for n, s in specs.items() if s.nested_paths] == ["mapping", "pair", "either"]
    assert list(paths_within({"s": "text", "n": [1, None, True]})) == []
    assert list(paths_within({Path("b"), Path("a")})) == ["a", "b"]  # not hash order


def _reader() -> Recipe:
    cab = Cab("read", ["/bin/sh", "-c", "echo run >> counter.txt"], NestedIn, None, NESTED_META)
    recipe = Recipe("nested")
    recipe.add_step("read", cab, mapping={"k": Path("m1")}, pair={"a": "p1", "b": "p2"})
    return recipe


@pytest.mark.parametrize("changed", ["m1", "p2"])
def test_a_changed_file_inside_a_mapping_or_a_model_reruns_the_step(
    tmp_path: Path, changed: str
) -> None:
    for name in ("m1", "p1", "p2"):
        (tmp_path / name).write_text("one")
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    statuses = []
    for content in ("one", "one", "a longer content"):
        (tmp_path / changed).write_text(content)
        result = run_recipe(_reader(), config=config, cwd=tmp_path)
        statuses.append(result.steps[0].status)
    assert statuses == ["ok", "cached", "ok"]


@pytest.mark.parametrize("annotation", [dict[str, str], Pair, dict[str, File] | None])
def test_a_mapping_or_model_on_the_command_line_is_refused_where_the_cab_is_declared(
    annotation: object,
) -> None:
    from pydantic import create_model

    model = create_model("M", m=(annotation, None))
    with pytest.raises(ValueError, match=r"input 'm' is a mapping or a model, which has no"):
        Cab("t", "/bin/true", model)
    Cab("t", "/bin/true", model, None, {"m": ParamMeta(skip=True)})  # fine in templates


def test_a_pysteps_paths_inside_a_mapping_are_shown_to_its_backend(tmp_path: Path) -> None:
    @pystep
    def total(files: dict[str, Path]) -> int:
        return sum(len(p.read_text()) for p in files.values())

    (tmp_path / "there").write_text("abc")
    uses = _path_uses(total, {"files": {"k": Path("there"), "j": Path("later")}}, str(tmp_path))
    assert [(u.path, u.role) for u in uses] == [
        (str(tmp_path / "there"), "input"),
        (str(tmp_path / "later"), "output"),  # not there yet: the function may make it
    ]


class Region(BaseModel):
    ra: float
    dec: float

    def __str__(self) -> str:
        return f"{self.ra},{self.dec}"


class RegionIn(BaseModel):
    centre: Region


def test_a_model_that_chose_its_own_text_is_a_command_line_word() -> None:
    """The refusal must not break a model with a ``__str__`` (it gave --centre 1.5,-30.0)."""
    from shinobi.steps.argv import render_argv

    cab = Cab("point", "echo", RegionIn)
    assert render_argv(cab, dict(RegionIn(centre={"ra": 1.5, "dec": -30}))) == [
        "echo",
        "--centre",
        "1.5,-30.0",
    ]


class SetIn(BaseModel):
    files: set[File]


def test_a_set_of_paths_is_words_and_paths_in_a_stable_order() -> None:
    """A set was one word, "{PosixPath('a.txt')}", and one bogus path."""
    from shinobi.steps.argv import render_argv

    cab = Cab("cat", "cat", SetIn, None, {"files": ParamMeta(positional=True)})
    values = dict(SetIn(files={"b.txt", "a.txt"}))
    assert render_argv(cab, values) == ["cat", "a.txt", "b.txt"]
    assert [u.path for u in path_uses(cab, values, {}, "/w")] == ["/w/a.txt", "/w/b.txt"]


def test_paths_in_fields_typed_loosely_are_found_in_the_value() -> None:
    """``dict[str, Any]`` holding a Path was replayed from the cache after the file
    changed: only annotations naming a path were walked."""
    import dataclasses
    from typing import Any, NamedTuple

    from typing_extensions import TypedDict

    class Typed(TypedDict):
        f: Path

    @dataclasses.dataclass
    class Pairing:
        f: Path

    class Named(NamedTuple):
        f: Path

    class Loose(BaseModel):
        a: dict[str, Any] = {}
        b: dict = {}  # type: ignore[type-arg]
        c: Typed | None = None
        d: Pairing | None = None
        e: Named | None = None
        g: Any = None
        n: list[int] = []

    specs = fields_of(Loose)
    assert [n for n, s in specs.items() if s.nested_paths] == ["a", "b", "c", "d", "e", "g"]
    loose = Loose(
        a={"x": Path("a1"), "y": "text"},
        b={"x": [Path("b1")]},
        c={"f": Path("c1")},
        d=Pairing(Path("d1")),
        e=Named(Path("e1")),
        g=Path("g1"),
    )
    found = [p for name, spec in specs.items() for p in paths_within(getattr(loose, name))]
    assert found == ["a1", "b1", "c1", "d1", "e1", "g1"]  # text is text, not a path
