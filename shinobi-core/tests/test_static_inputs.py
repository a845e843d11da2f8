"""Values known before a run are checked against their steps before anything runs.

A literal or a recipe input of the wrong type, or a required input nothing is
wired to, would otherwise fail its step only when its turn came, after every
step before it had run.
"""

from __future__ import annotations

import collections
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
from pydantic import BaseModel, Field, FilePath, create_model, field_validator

from shinobi.config import load_config
from shinobi.errors import RecipeGraphError, UsageError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class TouchIn(BaseModel):
    out: Path


class TouchOut(BaseModel):
    out: Path | None = None


class UseIn(BaseModel):
    f: Path
    count: int


class Settings(BaseModel):
    label: int = 3
    made: str = "made"


touch = Cab("touch", "/bin/touch", TouchIn, TouchOut, {"out": ParamMeta(positional=True)})
use = Cab(
    "use",
    "/bin/true",
    UseIn,
    field_meta={"f": ParamMeta(positional=True), "count": ParamMeta(positional=True)},
)


def config() -> Any:
    return load_config({"cache.enabled": False})


def two_steps(count: Any) -> Recipe:
    recipe = Recipe("r", Settings)
    recipe.add_step("make", touch, out=recipe.inputs.made)
    recipe.add_step("use", use, f=recipe.outputs.make.out, count=count)
    return recipe


def test_a_literal_of_the_wrong_type_is_refused_before_the_first_step_runs(
    tmp_path: Path,
) -> None:
    with pytest.raises(UsageError) as info:
        run_recipe(two_steps("lots"), cwd=tmp_path, config=config())
    assert str(info.value).startswith("recipe 'r', step 'use': input 'count': Input should be")
    assert not (tmp_path / "made").exists()  # 'make' never ran


def test_a_recipe_input_wired_to_a_field_of_another_type_is_refused(tmp_path: Path) -> None:
    class Text(BaseModel):
        word: str

    echo = Cab("echo", "/bin/echo", Text, field_meta={"word": ParamMeta(positional=True)})
    recipe = Recipe("r", Settings)
    recipe.add_step("say", echo, word=recipe.inputs.label)  # an int into a str field
    with pytest.raises(RecipeGraphError, match=r"step 'say', input 'word': is declared str but"):
        run_recipe(recipe, cwd=tmp_path, config=config())


def test_values_that_validate_run(tmp_path: Path) -> None:
    result = run_recipe(two_steps("7"), cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert (tmp_path / "made").exists()


def test_a_required_input_nothing_is_wired_to_is_refused(tmp_path: Path) -> None:
    recipe = Recipe("r", Settings)
    recipe.add_step("make", touch)
    with pytest.raises(UsageError, match=r"step 'make': input 'out' is required and nothing is"):
        run_recipe(recipe, cwd=tmp_path, config=config())


class Solve(BaseModel):
    solint: str


class CleanIn(BaseModel):
    size: tuple[int, int] = (1, 1)
    solve: Solve | None = None


clean = Cab("clean", "/bin/true", CleanIn, field_meta={"solve": ParamMeta(skip=True)})


@pytest.mark.parametrize(
    ("wired", "said"),
    [
        (
            {"size": (2048,)},
            "step 'clean': input 'size': takes exactly 2 values, but was given 1 (2048);"
            " give it 2, one for each element",
        ),
        ({"size": ()}, "input 'size': takes exactly 2 values, but was given 0; give it 2"),
        ({"solve": {}}, "step 'clean': input 'solve.solint': Field required"),  # a key, no input
    ],
)
def test_a_value_given_without_a_part_is_refused_saying_what_it_lacks(
    tmp_path: Path, wired: dict[str, Any], said: str
) -> None:
    """``size=(2048,)`` was refused as "input 'size.1' is required and nothing is wired
    to it (wire it in add_step, or give CleanIn.size.1 a default)": it was wired."""
    recipe = Recipe("r", Settings)
    recipe.add_step("clean", clean, **wired)
    with pytest.raises(UsageError) as info:
        run_recipe(recipe, cwd=tmp_path, config=config())
    assert said in str(info.value) and "wired" not in str(info.value)


def test_a_tuple_default_too_short_is_refused_saying_what_it_lacks(tmp_path: Path) -> None:
    class Short(BaseModel):
        size: tuple[int, int] = (5,)  # type: ignore[assignment]

    recipe = Recipe("r", Settings)
    recipe.add_step("clean", Cab("clean", "/bin/true", Short))
    with pytest.raises(UsageError, match=r"input 'size': takes exactly 2 values, but was given 1"):
        run_recipe(recipe, cwd=tmp_path, config=config())


def test_what_the_models_own_validators_decide_is_left_to_the_run(
    tmp_path: Path,
) -> None:
    class Checked(BaseModel):
        src: FilePath
        level: int

        @field_validator("level")
        @classmethod
        def positive(cls, value: int) -> int:
            if value <= 0:
                raise ValueError("must be positive")
            return value

    cat = Cab(
        "cat",
        "/bin/cat",
        Checked,
        field_meta={"src": ParamMeta(positional=True), "level": ParamMeta(skip=True)},
    )
    recipe = Recipe("r", Settings)
    recipe.add_step("make", touch, out=str(tmp_path / "later"))
    recipe.add_step("read", cat, src=recipe.outputs.make.out, level=0)
    result = run_recipe(recipe, cwd=tmp_path, config=config())
    assert not result.ok  # refused by the step's own check when its turn came
    assert result.error == "input 'level': Value error, must be positive (got 0)"
    assert (tmp_path / "later").exists()


def test_a_scatter_over_known_values_checks_every_slice(tmp_path: Path) -> None:
    class One(BaseModel):
        count: int

    class Many(BaseModel):
        counts: list[str] = ["1", "2", "three"]

    each = Cab("each", "/bin/true", One, field_meta={"count": ParamMeta(positional=True)})
    recipe = Recipe("r", Many)
    recipe.add_step("each", each, scatter=["count"], count=recipe.inputs.counts)
    with pytest.raises(UsageError, match=r"step 'each\[2\]': input 'count'"):
        run_recipe(recipe, cwd=tmp_path, config=config())


@pytest.mark.slow
def test_the_dry_run_refuses_it_in_one_line(tmp_path: Path) -> None:
    recipe_file = tmp_path / "bad.py"
    recipe_file.write_text(
        "from tests_static import two_steps\npipe = two_steps('lots')\n", encoding="utf-8"
    )
    (tmp_path / "tests_static.py").write_text(Path(__file__).read_text(), encoding="utf-8")
    ninja = str(Path(sys.executable).parent / "ninja")
    proc = subprocess.run(
        [ninja, "run", f"{recipe_file}:pipe", "--dryrun"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "ninja: error: recipe 'r', step 'use': input 'count': Input should be a valid integer,"
        " unable to parse string as an integer (got 'lots')"
    ]
    assert not (tmp_path / "made").exists()


def test_frozen_and_strict_models_are_checked_as_the_run_would(tmp_path: Path) -> None:
    from pydantic import ConfigDict, Field

    class Frozen(BaseModel):
        model_config = ConfigDict(frozen=True)
        n: int
        m: int = Field(1, frozen=True)

    class Strict(BaseModel):
        model_config = ConfigDict(strict=True)
        n: int

    frozen = Cab("frozen", "/bin/true", Frozen, field_meta={"n": ParamMeta(positional=True)})
    strict = Cab("strict", "/bin/true", Strict, field_meta={"n": ParamMeta(positional=True)})
    fine = Recipe("r", Settings)
    fine.add_step("a", frozen, n=3, m=2)  # a frozen field is still given its value
    assert run_recipe(fine, cwd=tmp_path, config=config()).ok
    picky = Recipe("r", Settings)
    picky.add_step("b", strict, n="3")  # strict: no str -> int, before the run as in it
    with pytest.raises(UsageError, match=r"step 'b': input 'n': Input should be a valid integer"):
        run_recipe(picky, cwd=tmp_path, config=config())


def test_a_nested_recipe_s_steps_are_checked_against_what_its_model_made(
    tmp_path: Path,
) -> None:
    """The sub-recipe turns "1GiB" into a ByteSize before its step sees an int."""
    from pydantic import ByteSize

    class Mem(BaseModel):
        mem: int

    echo = Cab("echo", ["/bin/echo"], Mem, field_meta={"mem": ParamMeta(flag="--mem")})

    class SubIn(BaseModel):
        mem: ByteSize = ByteSize(1024)

    sub = Recipe("sub", SubIn)
    sub.add_step("e", echo, mem=sub.inputs.mem)
    top = Recipe("top", Settings)
    top.add_step("s", sub, mem="1GiB")
    assert run_recipe(top, cwd=tmp_path, config=config()).ok
    wrong = Recipe("top", Settings)
    wrong.add_step("s", sub, mem="lots")  # what the sub-recipe refuses, refused up front
    with pytest.raises(UsageError, match=r"step 's': input 'mem': could not parse"):
        run_recipe(wrong, cwd=tmp_path, config=config())


def test_models_that_reshape_their_input_and_paths_yet_to_be_made_are_left_to_the_run(
    tmp_path: Path,
) -> None:
    from pydantic import NewPath, model_validator

    class Coded(BaseModel):
        a: int

        @model_validator(mode="before")
        @classmethod
        def strip(cls, data: Any) -> Any:
            return {"a": int(str(data["a"]).lstrip("n"))}

    class Fresh(BaseModel):
        f: NewPath

    coded = Cab("coded", "/bin/true", Coded)
    fresh = Cab("fresh", "/bin/touch", Fresh, field_meta={"f": ParamMeta(positional=True)})
    recipe = Recipe("r", Settings, max_workers=1)
    recipe.add_step("c", coded, a="n5")
    recipe.add_step("mk", Cab("mk", ["/bin/mkdir", "-p", str(tmp_path / "newdir")]))
    recipe.add_step("t", fresh, f=str(tmp_path / "newdir" / "x.txt"))
    from shinobi.graph import build_graph
    from shinobi.plan import check_statically

    check_statically(build_graph(recipe), {"label": 3, "made": "made"}, str(tmp_path))


def test_a_wrong_value_for_a_nested_recipe_s_own_input_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    class Count(BaseModel):
        n: int = 1

    echo = Cab("echo", ["/bin/echo"], Count, field_meta={"n": ParamMeta(positional=True)})
    inner = Recipe("inner", Count)
    inner.add_step("e", echo, n=inner.inputs.n)
    top = Recipe("top", Settings)
    top.add_step("first", touch, out="made")
    top.add_step("i", inner, n="abc")
    with pytest.raises(UsageError, match=r"step 'i': input 'n': Input should be a valid integer"):
        run_recipe(top, cwd=tmp_path, config=config())
    assert not (tmp_path / "made").exists()


def test_a_field_with_an_alias_is_wired_by_its_name(tmp_path: Path) -> None:
    from pydantic import Field

    class Aliased(BaseModel):
        level: int = Field(3, alias="Level")

    said = Cab(
        "said",
        ["/bin/sh", "-c", 'echo "$0" > level.txt'],
        Aliased,
        field_meta={"level": ParamMeta(positional=True)},
    )
    recipe = Recipe("r", Settings)
    recipe.add_step("s", said, level=5)
    assert run_recipe(recipe, cwd=tmp_path, config=config()).ok
    assert (tmp_path / "level.txt").read_text() == "5\n"


class Crashing(BaseModel):
    n: int = 1

    @field_validator("n")
    @classmethod
    def crash(cls, value: int) -> int:
        raise RuntimeError("the validator itself broke")


def test_a_recipe_validator_that_crashes_is_a_one_line_error_naming_the_recipe(
    tmp_path: Path,
) -> None:
    recipe = Recipe("crashy", Crashing)
    with pytest.raises(UsageError, match=r"recipe 'crashy': validating its inputs raised"):
        run_recipe(recipe, {"n": 2}, config=config(), cwd=tmp_path, workdir=tmp_path)


def test_a_step_validator_that_crashes_fails_that_step_with_what_it_raised(
    tmp_path: Path,
) -> None:
    crashing = Cab("crashing", "/bin/true", Crashing)
    recipe = Recipe("r")
    recipe.add_step("first", touch, out=Path("made"))
    recipe.add_step("bad", crashing, n=2)
    result = run_recipe(recipe, config=config(), cwd=tmp_path, workdir=tmp_path)
    assert not result.ok and result.failed_step == "bad"
    assert "RuntimeError: the validator itself broke" in (result.error or "")


class CrashingAtLength(BaseModel):
    n: int = 1

    @field_validator("n")
    @classmethod
    def crash(cls, value: int) -> int:
        raise RuntimeError("first line\nand a traceback-like second one")


def test_a_validator_crash_with_a_long_message_stays_on_one_line(tmp_path: Path) -> None:
    recipe = Recipe("crashy", CrashingAtLength)
    with pytest.raises(UsageError) as raised:
        run_recipe(recipe, {"n": 2}, config=config(), cwd=tmp_path, workdir=tmp_path)
    assert str(raised.value).endswith("raised RuntimeError: first line")


class WordIn(BaseModel):
    word: str


class TextIn(BaseModel):
    path: str
    paths: list[str] = []


def _word_file_maker() -> Cab:
    """A cab that writes ``w-WORD.txt`` and declares it as its File output."""
    from shinobi.steps import File

    class MadeFile(BaseModel):
        out: File

    return Cab(
        "make",
        ["sh", "-c", 'echo "$1" > "w-$1.txt"', "sh"],
        WordIn,
        MadeFile,
        {"word": ParamMeta(positional=True), "out": ParamMeta(implicit="w-{word}.txt")},
    )


def test_a_file_output_wired_to_a_text_input_is_refused_naming_the_declaration(
    tmp_path: Path,
) -> None:
    """pydantic refused the Path for a str only when the step's turn came; taken as
    text it would not be mounted for a container nor keyed by content in the cache."""
    make = _word_file_maker()
    meta = {"path": ParamMeta(positional=True), "paths": ParamMeta(skip=True)}
    cat = Cab("cat", ["cat"], TextIn, None, meta)
    recipe = Recipe("r")
    recipe.add_step("make", make, word="x")
    recipe.add_step("cat", cat, path=recipe.outputs.make.out)
    with pytest.raises(RecipeGraphError, match=r"step .cat., input .path.: is declared str but"):
        run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    assert not (tmp_path / "w-x.txt").exists()


def test_a_text_input_the_cab_declares_a_file_takes_a_file_output(tmp_path: Path) -> None:
    """``ParamMeta(dtype="File")`` makes a ``str`` field a path (docs/cabs.md): a path
    output wired to it runs, where the bare ``str`` is refused (above)."""
    make = _word_file_maker()
    meta = {"path": ParamMeta(positional=True, dtype="File"), "paths": ParamMeta(skip=True)}
    cat = Cab("cat", ["cat"], TextIn, None, meta)
    recipe = Recipe("r")
    recipe.add_step("make", make, word="x")
    recipe.add_step("cat", cat, path=recipe.outputs.make.out)
    result = run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    assert result.ok, result.error
    assert result.steps[1].stdout.strip() == "x"


class CountIn(BaseModel):
    n: int


def test_a_passthrough_output_wired_to_a_field_of_another_type_is_refused_before_any_step(
    tmp_path: Path,
) -> None:
    """The path a passthrough hands on is known before the run: the dry run refused
    it, while the run made 'made.txt' first and failed after."""
    count = Cab("count", "/bin/echo", CountIn, field_meta={"n": ParamMeta(positional=True)})
    recipe = Recipe("k")
    recipe.add_step("pre", touch, out="made.txt")
    recipe.add_step("use", count, n=recipe.outputs.pre.out)
    with pytest.raises(RecipeGraphError, match=r"step 'use', input 'n': is declared int but"):
        run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    assert not (tmp_path / "made.txt").exists()


class Counted(BaseModel):
    n: int = 0


def test_a_recipe_output_of_the_wrong_type_is_refused_before_any_step(tmp_path: Path) -> None:
    """set_output of a path to an int output failed the run after every step had run;
    build_graph now refuses the declared types (see test_typecheck_recipe_outputs)."""
    recipe = Recipe("mis", outputs_model=Counted)
    recipe.add_step("a", touch, out="outs.txt")
    recipe.set_output("n", recipe.outputs.a.out)
    config = load_config({"cache.enabled": False})
    with pytest.raises(RecipeGraphError, match=r"recipe 'mis', output 'n': is declared int but"):
        run_recipe(recipe, cwd=tmp_path, config=config)
    assert not (tmp_path / "outs.txt").exists()


def test_a_bad_recipe_output_is_refused_before_any_step_of_a_scatter_or_template(
    tmp_path: Path,
) -> None:
    """Such a recipe is planned before it runs: were only its steps' values checked
    there, its own bad output would be found after every step ran, failing a run
    that had done all its work."""

    class Made(BaseModel):
        made: Path | None = None

    templated_out = {"out": ParamMeta(positional=True), "made": ParamMeta(implicit="{out}")}
    scattered = Recipe("sc", outputs_model=Counted)
    scattered.add_step("t", touch, scatter=["out"], out=["a.txt", "b.txt"])
    scattered.set_output("n", "abc")
    templated = Recipe("tp", outputs_model=Counted)
    templated.add_step("t", Cab("made", "/bin/touch", TouchIn, Made, templated_out), out="c.txt")
    templated.set_output("n", "abc")
    for recipe in (scattered, templated):
        with pytest.raises(UsageError, match=r"output 'n': .*integer"):
            run_recipe(recipe, cwd=tmp_path, config=config())
    assert list(tmp_path.iterdir()) == []


def test_a_passthrough_through_a_nested_recipe_s_output_is_checked_before_any_step(
    tmp_path: Path,
) -> None:
    """Wired through set_output of a nested recipe, it was found after the nested ran."""

    class Made(BaseModel):
        out: Path | None = None

    sub = Recipe("sub", outputs_model=Made)
    sub.add_step("mk", touch, out="made.txt")
    sub.set_output("out", sub.outputs.mk.out)
    count = Cab("count", "/bin/echo", CountIn, field_meta={"n": ParamMeta(positional=True)})
    recipe = Recipe("k")
    recipe.add_step("s", sub)
    recipe.add_step("use", count, n=recipe.outputs.s.out)
    with pytest.raises(RecipeGraphError, match=r"step 'use', input 'n': is declared int but"):
        run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    assert not (tmp_path / "made.txt").exists()


class NamedOut(BaseModel):
    name: str = ""


class TextsIn(BaseModel):
    paths: list[str] = []


def test_a_path_output_to_a_str_recipe_output_or_a_list_of_str_is_refused_at_build(
    tmp_path: Path,
) -> None:
    """Every step ran, then the run failed on the recipe's output or the step's list."""
    named = Recipe("r1", outputs_model=NamedOut)
    named.add_step("t", touch, out="t.txt")
    named.set_output("name", named.outputs.t.out)
    with pytest.raises(RecipeGraphError, match=r"output 'name': is declared str but wired"):
        run_recipe(named, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    cat = Cab("cat", "cat", TextsIn, None, {"paths": ParamMeta(positional=True)})
    listed = Recipe("r2")
    listed.add_step("t", touch, out="t.txt")
    listed.add_step("cat", cat, paths=["x", listed.outputs.t.out])
    with pytest.raises(RecipeGraphError, match=r"input 'paths': is declared list\[str\] but"):
        run_recipe(listed, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    assert not (tmp_path / "t.txt").exists()


class LabelsIn(BaseModel):
    labels: dict[str, str] = {}


@pytest.mark.parametrize(
    "annotation",
    [
        dict[str, Optional[str]],  # noqa: UP045 (the spelling under test)
        dict[str, Annotated[str, Field(min_length=1)]],
        collections.OrderedDict[str, str],
        Mapping[str, str] | None,
    ],
    ids=["optional", "annotated", "ordered", "mapping"],
)
def test_a_path_output_to_any_mapping_of_text_is_refused_at_build(
    tmp_path: Path, annotation: Any
) -> None:
    model = create_model("M", m=(annotation, None))
    cab = Cab("env", "/usr/bin/env", model, None, {"m": ParamMeta(skip=True)})
    recipe = Recipe("r5")
    recipe.add_step("t", touch, out="t.txt")
    recipe.add_step("env", cab, m={"k": recipe.outputs.t.out})
    with pytest.raises(RecipeGraphError, match=r"input 'm': is declared a mapping to str"):
        run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False}))


def test_a_path_output_in_a_list_value_or_a_recipe_output_mapping_is_refused(
    tmp_path: Path,
) -> None:
    class ListsIn(BaseModel):
        m: dict[str, list[str]] = {}

    class Mapped(BaseModel):
        m: dict[str, str] | None = None

    cab = Cab("env", "/usr/bin/env", ListsIn, None, {"m": ParamMeta(skip=True)})
    listed = Recipe("r6")
    listed.add_step("t", touch, out="t.txt")
    listed.add_step("env", cab, m={"k": ["x", listed.outputs.t.out]})
    with pytest.raises(RecipeGraphError, match=r"input 'm': is declared a mapping to str"):
        run_recipe(listed, cwd=tmp_path, config=load_config({"cache.enabled": False}))

    class TuplesIn(BaseModel):
        m: dict[str, tuple[str, ...]] = {}

    tupled = Recipe("r6t")
    tupled.add_step("t", touch, out="t.txt")
    env = Cab("env", "/usr/bin/env", TuplesIn, None, {"m": ParamMeta(skip=True)})
    tupled.add_step("env", env, m={"k": (tupled.outputs.t.out,)})
    with pytest.raises(RecipeGraphError, match=r"input 'm': is declared a mapping to str"):
        run_recipe(tupled, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    out = Recipe("r7", outputs_model=Mapped)
    out.add_step("t", touch, out="t.txt")
    out.set_output("m", {"k": out.outputs.t.out})
    with pytest.raises(RecipeGraphError, match=r"give the path an output of its own"):
        run_recipe(out, cwd=tmp_path, config=load_config({"cache.enabled": False}))


def test_a_path_output_to_a_value_of_a_dict_of_str_is_refused_at_build(tmp_path: Path) -> None:
    """Every step before it ran, then pydantic refused the path as text."""
    env = Cab("env", "/usr/bin/env", LabelsIn, None, {"labels": ParamMeta(skip=True)})
    recipe = Recipe("r3")
    recipe.add_step("t", touch, out="t.txt")
    recipe.add_step("env", env, labels={"plain": "x", "made": recipe.outputs.t.out})
    with pytest.raises(
        RecipeGraphError, match=r"input 'labels': is declared a mapping to str but wired"
    ):
        run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    assert not (tmp_path / "t.txt").exists()
    fine = Recipe("r4")  # text values, and a mapping of anything, are left alone
    fine.add_step("env", env, labels={"plain": "x"})
    assert run_recipe(fine, cwd=tmp_path, config=load_config({"cache.enabled": False})).ok
