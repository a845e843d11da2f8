"""A step input declared a type its wired step output (or recipe input) can never
have (an ``int`` into a ``str``, a File into an ``int``, a list into one value, a
Directory into a File) is refused by ``build_graph``: before, the consuming step
failed on it when its turn came, maybe hours into the run. The rule is the one
recipe outputs are checked by (test_typecheck_recipe_outputs): what pydantic
may take (an ``int`` into a ``float``, into ``int | None``, into ``Any``) stays
accepted."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import pytest
from cli_in_process import in_process as ninja
from pydantic import BaseModel, BeforeValidator, ConfigDict
from typed_producers import CLASHES, Base, NoIn, make, slices, sub

import shinobi
from shinobi.graph import RecipeGraphError, build_graph
from shinobi.steps import Cab, Directory, File, Recipe


def _consumer(annotation: Any) -> Cab:
    """A cab whose one input ``v`` is declared ``annotation``."""
    inputs = type("In", (BaseModel,), {"__annotations__": {"v": annotation}})
    return Cab(name="use", command="/bin/true", inputs_model=inputs)


def _wired(annotation: Any, field: str, *, gathered: bool = False, sliced: bool = False) -> Recipe:
    """A recipe whose step ``use`` takes ``make``'s ``field`` as ``v``, declared
    ``annotation``; ``make`` scattered when ``gathered``, ``use`` scattered over
    ``v`` when ``sliced``."""
    recipe = Recipe("r", NoIn, BaseModel)
    if gathered:
        recipe.add_step("make", slices, scatter=["i"], i=[1, 2])
    else:
        recipe.add_step("make", make)
    scatter = ["v"] if sliced else []
    recipe.add_step(
        "use", _consumer(annotation), scatter=scatter, v=getattr(recipe.outputs.make, field)
    )
    return recipe


def test_an_int_into_a_str_is_refused_naming_both() -> None:
    with pytest.raises(RecipeGraphError) as info:
        build_graph(_wired(str, "n"))
    assert str(info.value) == (
        "recipe 'r', step 'use', input 'v': is declared str but wired to the output 'n' of"
        " step 'make', declared int, which it can never take; declare the two the same type,"
        " or wire the input to a value of its type"
    )


@pytest.mark.parametrize(
    ("annotation", "field", "declared", "made"),
    [*CLASHES, (list[str], "ns", "list[str]", "list[int]")],
)
def test_a_clash_is_refused(annotation: Any, field: str, declared: str, made: str) -> None:
    said = (
        f"input 'v': is declared {declared} but wired to the output {field!r} of step 'make',"
        f" declared {made},"
    )
    with pytest.raises(RecipeGraphError, match=re.escape(said)):
        build_graph(_wired(annotation, field))


@pytest.mark.parametrize(
    ("annotation", "field"),
    [
        (float, "n"),
        (int | None, "n"),
        (Any, "n"),
        (bool, "n"),  # 0 and 1 are bools
        (int | str, "n"),  # a union: left to the run
        (int, "s"),  # "5" is an int
        (Path, "f"),  # a plain Path is either kind
        (Path, "d"),
        (Directory, "ms"),
        (File | None, "f"),
        (list[Path], "fs"),
        (list[float], "ns"),
        (int, "x"),  # Any may be anything
        (Annotated[str, BeforeValidator(str)], "n"),  # a validator of its own
    ],
)
def test_what_the_run_may_take_is_accepted(annotation: Any, field: str) -> None:
    build_graph(_wired(annotation, field))


def test_a_model_that_coerces_numbers_to_text_is_accepted() -> None:
    class In(BaseModel):
        model_config = ConfigDict(coerce_numbers_to_str=True)
        v: str

    recipe = Recipe("r", NoIn, BaseModel)
    recipe.add_step("make", make)
    recipe.add_step(
        "use", Cab(name="use", command="/bin/true", inputs_model=In), v=recipe.outputs.make.n
    )
    build_graph(recipe)


@shinobi.pystep
def use_model(m: Base) -> None:
    return None


def test_a_subclass_of_the_declared_model_is_accepted() -> None:
    recipe = Recipe("r", NoIn, BaseModel)
    recipe.add_step("sub", sub)
    recipe.add_step("use", use_model, m=recipe.outputs.sub.m)
    build_graph(recipe)


def test_a_scattered_producer_hands_on_a_list() -> None:
    with pytest.raises(RecipeGraphError, match=re.escape("declared list[int] (gathered")):
        build_graph(_wired(int, "n", gathered=True))
    build_graph(_wired(list[int], "n", gathered=True))
    build_graph(_wired(list[float], "n", gathered=True))


def test_a_scattered_input_takes_one_item_per_slice() -> None:
    build_graph(_wired(int, "ns", sliced=True))  # a scatter over list[int] into an int
    build_graph(_wired(float, "n", gathered=True, sliced=True))  # slices of a gather
    with pytest.raises(RecipeGraphError) as info:
        build_graph(_wired(str, "ns", sliced=True))
    assert str(info.value).startswith(
        "recipe 'r', step 'use', input 'v': is declared str and scattered over the output 'ns'"
        " of step 'make', declared list[int]: each slice gets one item of that list, which it"
        " can never take; declare the input as the list's item type, or do not scatter over it"
    )
    # one value scattered over, refused before the run too: it is never a list
    with pytest.raises(RecipeGraphError, match=re.escape("declared int: one value, no list")):
        build_graph(_wired(int, "n", sliced=True))


def test_a_list_input_scattered_over_a_list_of_paths_is_refused() -> None:
    """Each slice gets one path, which a list[File] input never takes: the dry run
    passed and every slice failed at run time (a recipe input's list was refused)."""
    with pytest.raises(RecipeGraphError, match="each slice gets one item of that list"):
        build_graph(_wired(list[int], "ns", sliced=True))
    build_graph(_wired(list[int], "ns", gathered=True, sliced=True))  # slices of gathered lists
    with pytest.raises(RecipeGraphError, match="each slice gets one item of that list"):
        build_graph(_wired(list[int], "n", gathered=True, sliced=True))


class IntIn(BaseModel):
    k: int
    f: File


def test_a_recipe_input_is_checked() -> None:
    recipe = Recipe("r", IntIn, BaseModel)
    recipe.add_step("use", _consumer(str), v=recipe.inputs.k)
    with pytest.raises(RecipeGraphError) as info:
        build_graph(recipe)
    assert str(info.value).startswith(
        "recipe 'r', step 'use', input 'v': is declared str but wired to the recipe's input"
        " 'k', declared int, which it can never take;"
    )
    for annotation, field in ((float, "k"), (int | None, "k"), (Path, "f")):
        ok = Recipe("r", IntIn, BaseModel)
        ok.add_step("use", _consumer(annotation), v=getattr(ok.inputs, field))
        build_graph(ok)


class Body(BaseModel):
    n: int = 0
    until: File | None = None


@shinobi.pystep
def body(s: str = "") -> Body:
    return Body()


def test_a_loops_output_is_checked() -> None:
    recipe = Recipe("r", NoIn, BaseModel)
    recipe.add_loop("loop", body, max_iter=2, until="until")
    recipe.add_step("use", _consumer(str), v=recipe.outputs.loop.n)
    with pytest.raises(RecipeGraphError, match=re.escape("the output 'n' of step 'loop.2',")):
        build_graph(recipe)
    ok = Recipe("r", NoIn, BaseModel)
    ok.add_loop("loop", body, max_iter=2, until="until")
    ok.add_step("use", _consumer(float), v=ok.outputs.loop.n)
    build_graph(ok)


def test_a_carried_output_is_checked() -> None:
    recipe = Recipe("r", NoIn, BaseModel)
    recipe.add_loop("loop", body, max_iter=2, until="until", carry={"n": "s"})
    with pytest.raises(RecipeGraphError, match=re.escape("step 'loop.2', input 's': is declared")):
        build_graph(recipe)


def test_a_nested_recipe_is_checked_by_its_own_build() -> None:
    inner = _wired(str, "n")
    outer = Recipe("outer", NoIn, BaseModel)
    outer.add_step("inner", inner)
    with pytest.raises(RecipeGraphError, match=re.escape("recipe 'outer.inner', step 'use'")):
        build_graph(outer)


#: ``count`` touches ``ran`` and prints a number, which a wrangler makes its ``int``
#: output; ``say`` takes it as text: the clash was found only when ``say``'s turn came.
RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, OutputRef, Recipe, StepRef, Wrangler

class Counted(BaseModel):
    n: int | None = None

class Said(BaseModel):
    text: str

count = Cab(name="count", command=["/bin/sh", "-c", "touch ran && echo 'count: 5'"],
            outputs_model=Counted, wranglers=[Wrangler(r"count: (\\d+)", "output", output="n")])
say = Cab(name="say", command="/bin/echo", inputs_model=Said)
pipe = Recipe(name="pipe", steps=[StepRef("count", count, {}),
                                  StepRef("say", say, {"text": OutputRef("count", "n")})])
"""

REFUSAL = (
    "recipe 'pipe', step 'say', input 'text': is declared str but wired to the output 'n' of"
    " step 'count', declared int, which it can never take"
)


def test_the_dry_run_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "clash.py").write_text(RECIPE)
    code, _, err = ninja(capsys, "run", f"{tmp_path}/clash.py:pipe", "--dryrun")
    assert code == 2 and REFUSAL in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_run_refuses_before_any_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "clash.py").write_text(RECIPE)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    code, _, err = ninja(capsys, "run", f"{tmp_path}/clash.py:pipe")
    assert code != 0 and REFUSAL in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "ran").exists()  # the first step never ran


def test_a_wellmatched_recipe_still_dry_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ok.py").write_text(RECIPE.replace("text: str", "text: float"))
    code, _, err = ninja(capsys, "run", f"{tmp_path}/ok.py:pipe", "--dryrun")
    assert code == 0, err
