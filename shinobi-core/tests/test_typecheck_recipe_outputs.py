"""A recipe output declared a type its wired step output can never have (an ``int``
into a ``str``, a File into an ``int``, a list into one value, a Directory into a
File) is refused by ``build_graph``: before, the run found it only once every step
had run, and exited 1 with no step to blame. What pydantic may take (an ``int``
into a ``float``, into ``int | None``, into ``Any``) stays accepted."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import pytest
from cli_in_process import in_process as ninja
from pydantic import BaseModel, BeforeValidator, ConfigDict
from test_launch_fixtures import FakeTarget, engine
from typed_producers import CLASHES, Base, NoIn, make, slices, sub

from shinobi.graph import RecipeGraphError, build_graph
from shinobi.steps import MS, Directory, File, Recipe

__all__ = ["engine"]


def _wired(annotation: Any, field: str, *, scatter: bool = False) -> Recipe:
    """A recipe whose output ``out`` (declared ``annotation``) is ``make``'s ``field``."""
    out = type("Out", (BaseModel,), {"__annotations__": {"out": annotation}})
    recipe = Recipe("r", NoIn, out)
    if scatter:
        recipe.add_step("make", slices, scatter=["i"], i=[1, 2])
    else:
        recipe.add_step("make", make)
    recipe.set_output("out", getattr(recipe.outputs.make, field))
    return recipe


def test_an_int_into_a_str_is_refused_naming_both() -> None:
    with pytest.raises(RecipeGraphError) as info:
        build_graph(_wired(str, "n"))
    assert str(info.value) == (
        "recipe 'r', output 'out': is declared str but wired to the output 'n' of step"
        " 'make', declared int, which it can never take; declare the two the same type, or"
        " wire the output to a step output of its type"
    )


@pytest.mark.parametrize(
    ("annotation", "field", "declared", "made"),
    [*CLASHES, (float, "fs", "float", "list[File]")],
)
def test_a_clash_is_refused(annotation: Any, field: str, declared: str, made: str) -> None:
    said = (
        f"is declared {declared} but wired to the output {field!r} of step 'make', declared {made},"
    )
    with pytest.raises(RecipeGraphError, match=re.escape(said)):
        build_graph(_wired(annotation, field))


def test_a_scattered_step_makes_a_list() -> None:
    with pytest.raises(RecipeGraphError, match=re.escape("declared list[int] (gathered")):
        build_graph(_wired(int, "n", scatter=True))
    build_graph(_wired(list[int], "n", scatter=True))
    build_graph(_wired(list[float], "n", scatter=True))


@pytest.mark.parametrize(
    ("annotation", "field"),
    [
        (float, "n"),
        (int | None, "n"),
        (Any, "n"),
        (bool, "n"),  # 0 and 1 are bools
        (int | str, "n"),  # a union: left to the run
        (Path, "f"),  # a plain Path is either kind
        (Path, "d"),
        (Directory, "ms"),
        (MS, "d"),
        (File | None, "f"),
        (list[Path], "fs"),
        (int, "x"),  # Any may be anything
        (Annotated[str, BeforeValidator(str)], "n"),  # a validator of its own
    ],
)
def test_what_the_run_may_take_is_accepted(annotation: Any, field: str) -> None:
    build_graph(_wired(annotation, field))


def test_a_model_that_coerces_numbers_to_text_is_accepted() -> None:
    class Out(BaseModel):
        model_config = ConfigDict(coerce_numbers_to_str=True)
        out: str

    recipe = Recipe("r", NoIn, Out)
    recipe.add_step("make", make)
    recipe.set_output("out", recipe.outputs.make.n)
    build_graph(recipe)


def test_a_subclass_of_the_declared_model_is_accepted() -> None:
    class Out(BaseModel):
        out: Base

    recipe = Recipe("r", NoIn, Out)
    recipe.add_step("sub", sub)
    recipe.set_output("out", recipe.outputs.sub.m)
    build_graph(recipe)


class FloatOut(BaseModel):
    out: float


class StrOut(BaseModel):
    out: str


def test_a_nested_recipe_output_is_checked() -> None:
    inner = _wired(str, "n")
    outer = Recipe("outer", NoIn, BaseModel)
    outer.add_step("inner", inner)
    with pytest.raises(RecipeGraphError, match=re.escape("recipe 'outer.inner', output 'out'")):
        build_graph(outer)


def test_an_outer_output_from_a_nested_one_is_checked() -> None:
    inner = Recipe("inner", NoIn, FloatOut)
    inner.add_step("make", make)
    inner.set_output("out", inner.outputs.make.n)  # an int into a float: accepted
    outer = Recipe("outer", NoIn, StrOut)
    outer.add_step("inner", inner)
    outer.set_output("out", outer.outputs.inner.out)
    with pytest.raises(RecipeGraphError) as info:
        build_graph(outer)
    assert str(info.value).startswith(
        "recipe 'outer', output 'out': is declared str but wired to the output 'out' of step"
        " 'inner', declared float,"
    )
    outer_ok = Recipe("outer", NoIn, FloatOut)
    outer_ok.add_step("inner", inner)
    outer_ok.set_output("out", outer_ok.outputs.inner.out)
    build_graph(outer_ok)


#: ``count`` touches ``ran`` and prints a number, which a wrangler makes its ``int``
#: output: known only once the tool ran, so nothing before the run could see the value.
RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, OutputRef, Recipe, StepRef, Wrangler

class Counted(BaseModel):
    n: int | None = None

class Out(BaseModel):
    n: str

count = Cab(name="count", command=["/bin/sh", "-c", "touch ran && echo 'count: 5'"],
            outputs_model=Counted, wranglers=[Wrangler(r"count: (\\d+)", "output", output="n")])
pipe = Recipe(name="pipe", outputs_model=Out, steps=[StepRef("count", count, {})],
              output_wiring={"n": OutputRef(step="count", field="n")})
"""

REFUSAL = (
    "recipe 'pipe', output 'n': is declared str but wired to the output 'n' of step 'count',"
    " declared int, which it can never take"
)


def test_the_dry_run_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "clash.py").write_text(RECIPE)
    code, _, err = ninja(capsys, "run", f"{tmp_path}/clash.py:pipe", "--dryrun")
    assert code == 2 and REFUSAL in err


def test_the_run_refuses_before_any_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "clash.py").write_text(RECIPE)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    code, _, err = ninja(capsys, "run", f"{tmp_path}/clash.py:pipe")
    assert code != 0 and REFUSAL in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "ran").exists()  # the tool never ran


def test_compile_refuses(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "clash.py").write_text(RECIPE)
    code, out, err = ninja(capsys, "compile", f"{tmp_path}/clash.py:pipe", "--engine", "fake")
    assert code != 0 and out == "" and REFUSAL in err


def test_a_wellmatched_recipe_still_compiles(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ok.py").write_text(RECIPE.replace("n: str", "n: float"))
    code, out, err = ninja(capsys, "compile", f"{tmp_path}/ok.py:pipe", "--engine", "fake")
    assert code == 0, err
    assert "touch ran" in out
