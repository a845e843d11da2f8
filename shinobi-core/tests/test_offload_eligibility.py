"""Which recipes can be offloaded, and that a refusal lists every reason at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel
from test_offload_fixtures import PathIn, PathOut, plan_of, rewriter, touch

from shinobi.offload.eligibility import check_offloadable
from shinobi.steps import (
    Cab,
    InputRef,
    OutputRef,
    ParamMeta,
    Recipe,
    StepRef,
    Wrangler,
    pystep,
    step,
)


def rules(recipe: Recipe, inputs: dict[str, Any] | None = None) -> list[str]:
    return [r.rule for r in check_offloadable(plan_of(recipe, inputs))]


def reasons(recipe: Recipe, inputs: dict[str, Any] | None = None) -> str:
    return "\n".join(str(r) for r in check_offloadable(plan_of(recipe, inputs)))


def test_cabs_wired_by_paths_are_eligible() -> None:
    recipe = Recipe(
        name="ok",
        inputs_model=PathIn,
        steps=[
            StepRef("make", touch, {"path": InputRef("path")}),
            StepRef("use", touch, {"path": OutputRef("make", "path")}),
        ],
    )
    assert rules(recipe, {"path": "x"}) == []


def test_an_orchestration_function_is_refused() -> None:
    @step(touch)
    def twice(ctx: Any) -> Any:
        ctx.run()
        return ctx.run()

    recipe = Recipe(
        name="r", inputs_model=PathIn, steps=[StepRef("twice", twice, {"path": InputRef("path")})]
    )
    assert rules(recipe, {"path": "x"}) == ["orchestration"]
    assert "`ninja run` on a host of the cluster" in reasons(recipe, {"path": "x"})


def test_a_pystep_is_refused() -> None:
    @pystep
    def add(a: int) -> int:
        return a + 1

    recipe = Recipe(name="r", steps=[StepRef("add", add, {"a": 1})])
    assert rules(recipe) == ["pystep"]


def test_steps_naming_no_backend_are_refused_when_the_configured_default_is_venv() -> None:
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("a", touch, {"path": Path("a")}),
            StepRef("b", touch, {"path": Path("b")}),
            StepRef("c", touch, {"path": Path("c")}, backend="native"),  # its own: fine
        ],
    )
    assert check_offloadable(plan_of(recipe)) == []
    (refusal,) = check_offloadable(plan_of(recipe), default_backend="venv")
    assert refusal.rule == "venv" and "the configured backend.default" in refusal.reason
    assert refusal.reason.startswith("step 'a' (and every step that names no backend)")
    assert "SHINOBI_BACKEND_DEFAULT=native" in refusal.fix
    # a step with an image, compiled with a container runtime, runs in its image
    boxed = Cab("boxed", ["tool"], PathIn, PathOut, {"path": ParamMeta(positional=True)}, image="i")
    in_image = Recipe(name="r", steps=[StepRef("b", boxed, {"path": Path("b")})])
    assert check_offloadable(plan_of(in_image), "venv", container_runtime="docker") == []
    nested = Recipe(name="outer", steps=[StepRef("inner", in_image, {})])  # runs nothing itself
    assert check_offloadable(plan_of(nested), "venv", container_runtime="docker") == []
    assert [r.rule for r in check_offloadable(plan_of(in_image), "venv")] == ["venv"]


def test_a_venv_step_is_refused_whether_by_venv_or_by_backend() -> None:
    by_venv = Recipe(name="r", steps=[StepRef("t", touch, {"path": Path("x")}, venv="/opt/v")])
    by_backend = Recipe(name="r", steps=[StepRef("t", touch, {"path": Path("x")}, backend="venv")])
    assert rules(by_venv) == ["venv"] and "'/opt/v'" in reasons(by_venv)
    assert rules(by_backend) == ["venv"]


def test_a_mutable_input_that_is_not_a_path_is_refused() -> None:
    class StateIn(BaseModel):
        state: dict[str, int] = {}

    cab = Cab(
        name="m",
        command="/bin/true",
        inputs_model=StateIn,
        field_meta={"state": ParamMeta(skip=True, mutable=True)},
    )
    recipe = Recipe(name="r", steps=[StepRef("m", cab, {"state": {"a": 1}})])
    assert rules(recipe) == ["mutable"]
    assert "MUTABLE but not a path" in reasons(recipe)


def test_a_mutable_str_is_refused_with_the_declaration_that_fixes_it() -> None:
    """A str is no live Python object: it is a path the compiler cannot see as one."""

    class StrIn(BaseModel):
        ms: str
        passes: int = 1

    cab = Cab(
        name="m",
        command="/bin/true",
        inputs_model=StrIn,
        field_meta={"ms": ParamMeta(mutable=True), "passes": ParamMeta(mutable=True)},
    )
    recipe = Recipe(name="r", steps=[StepRef("m", cab, {"ms": "same.ms"})])
    said = reasons(recipe)
    assert "input 'ms' is MUTABLE but not a path: it is declared str" in said
    assert "declare it a Path (or File, Directory, MS)" in said
    assert "input 'passes' is MUTABLE but not a path: it is declared int, a live Python" in said


def test_a_mutable_str_the_cab_declares_a_path_by_dtype_is_fine() -> None:
    """``ParamMeta(dtype="MS")`` is the documented way to make a str a path
    (docs/cabs.md): refusing it would ask for the declaration it already has."""

    class StrIn(BaseModel):
        ms: str

    cab = Cab(
        name="m",
        command="/bin/true",
        inputs_model=StrIn,
        field_meta={"ms": ParamMeta(positional=True, mutable=True, dtype="MS")},
    )
    assert rules(Recipe(name="r", steps=[StepRef("m", cab, {"ms": "same.ms"})])) == []


def test_a_mutable_list_of_str_is_refused_with_the_list_declaration_that_fixes_it() -> None:
    class ListIn(BaseModel):
        tables: list[str] = []

    cab = Cab(
        name="m",
        command="/bin/true",
        inputs_model=ListIn,
        field_meta={"tables": ParamMeta(mutable=True)},
    )
    said = reasons(Recipe(name="r", steps=[StepRef("m", cab, {"tables": ["a.tab"]})]))
    assert "input 'tables' is MUTABLE but not a path: it is declared list[str]" in said
    assert "declare it list[Path] (or File, Directory, MS)" in said


def test_a_mutable_path_is_fine() -> None:
    recipe = Recipe(name="r", steps=[StepRef("cal", rewriter("cal"), {})])
    assert rules(recipe) == []


class CountOut(BaseModel):
    count: int | None = None
    total: int | None = None


class CountIn(BaseModel):
    count: int | None = None


def _counted(**users: dict[str, Any]) -> Recipe:
    """Step ``count``, whose ``count`` output a wrangler sets from what it prints, and
    a step per keyword, wired as its value says, reading it."""
    counter = Cab(
        name="counter",
        command="/bin/echo",
        outputs_model=CountOut,
        wranglers=[Wrangler(r"(\d+)", "output", output="count")],
    )
    user = Cab(name="user", command="/bin/echo", inputs_model=CountIn)
    steps = [StepRef(name, user, wiring) for name, wiring in users.items()]
    return Recipe(name="r", steps=[StepRef("count", counter, {}), *steps])


def test_a_wrangled_value_crossing_steps_is_refused() -> None:
    recipe = _counted(use={"count": OutputRef("count", "count")})
    assert rules(recipe) == ["crossing"]
    assert "set by a wrangler" in reasons(recipe)


def test_every_reader_of_a_refused_output_is_named_and_each_output_answered_apart() -> None:
    """Eligibility answers once per producer output: every reader still gets its own
    refusal, and another output of the same step its own answer."""
    recipe = _counted(
        a={"count": OutputRef("count", "count")},
        b={"count": OutputRef("count", "count")},
        c={"count": OutputRef("count", "total")},
    )
    said = [r.reason for r in check_offloadable(plan_of(recipe))]
    assert said == [
        "step 'a', input 'count': count.count is set by a wrangler from the tool's output,"
        " known only after it runs",
        "step 'b', input 'count': count.count is set by a wrangler from the tool's output,"
        " known only after it runs",
        "step 'c', input 'count': count.total is not a path (it is declared int | None);"
        " only filesystem paths can cross between offloaded steps",
    ]


def test_a_non_path_output_crossing_steps_is_refused_even_with_a_default() -> None:
    class FlagOut(BaseModel):
        ok: bool = True

    class FlagIn(BaseModel):
        ok: bool = False

    producer = Cab(name="p", command="/bin/true", outputs_model=FlagOut)
    consumer = Cab(name="c", command="/bin/true", inputs_model=FlagIn)
    recipe = Recipe(
        name="r",
        steps=[StepRef("p", producer, {}), StepRef("c", consumer, {"ok": OutputRef("p", "ok")})],
    )
    assert rules(recipe) == ["crossing"]
    assert "not a path (it is declared bool)" in reasons(recipe)


def test_a_harvested_path_crossing_steps_is_refused() -> None:
    class Found(BaseModel):
        found: list[Path] = []

    class Takes(BaseModel):
        files: list[Path] = []

    finder = Cab(
        name="find",
        command="/bin/true",
        outputs_model=Found,
        field_meta={"found": ParamMeta(harvest="*.fits")},
    )
    taker = Cab(name="take", command="/bin/true", inputs_model=Takes)
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("find", finder, {}),
            StepRef("take", taker, {"files": OutputRef("find", "found")}),
        ],
    )
    assert rules(recipe) == ["crossing"] and "glob" in reasons(recipe)


def test_every_reason_is_listed_not_just_the_first() -> None:
    @pystep
    def py(path: Path) -> None:
        return None

    counter = Cab(
        name="counter",
        command="/bin/echo",
        outputs_model=CountOut,
        wranglers=[Wrangler(r"(\d+)", "output", output="count")],
    )
    user = Cab(name="user", command="/bin/echo", inputs_model=CountIn)
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("t", touch, {"path": Path("x")}, venv="/v"),
            StepRef("py", py, {"path": OutputRef("t", "path")}),
            StepRef("count", counter, {}),
            StepRef("use", user, {"count": OutputRef("count", "count")}),
        ],
    )
    assert sorted(rules(recipe)) == ["crossing", "pystep", "venv"]


class LoopIn(BaseModel):
    prefix: str = "img"
    index: int = 0


class LoopOut(BaseModel):
    image: Path | None = None
    done: Path | None = None


def _cycle(image: str) -> Cab:
    return Cab(
        name="cycle",
        command="/bin/true",
        inputs_model=LoopIn,
        outputs_model=LoopOut,
        field_meta={
            "prefix": ParamMeta(skip=True),
            "index": ParamMeta(skip=True),
            "image": ParamMeta(implicit=image),
            "done": ParamMeta(implicit="{prefix}.done"),
        },
    )


def test_a_loop_naming_outputs_per_cycle_is_refused_once() -> None:
    recipe = Recipe(name="r", outputs_model=LoopOut)
    recipe.add_loop(
        "l", _cycle("{prefix}-{index}.fits"), max_iter=4, until="done", index_input="index"
    )
    found = check_offloadable(plan_of(recipe))
    assert [r.rule for r in found] == ["per-cycle"]
    assert "img-1.fits in iteration 1, img-2.fits in iteration 2" in found[0].reason


def test_a_loop_with_the_same_paths_every_iteration_is_eligible() -> None:
    recipe = Recipe(name="r", outputs_model=LoopOut)
    recipe.add_loop("l", _cycle("{prefix}.fits"), max_iter=4, until="done", index_input="index")
    assert rules(recipe) == []


def test_a_loop_whose_convergence_path_only_the_run_reports_is_refused() -> None:
    """A compiled guard tests a path written into the script: one a tool prints is
    not known when the script is written. (A non-path until is a graph error.)"""

    class Until(BaseModel):
        converged: Path | None = None

    body = Cab(
        name="b",
        command="/bin/true",
        outputs_model=Until,
        wranglers=[Wrangler(r"^flag: (.*)$", "output", output="converged")],
    )
    recipe = Recipe(name="r")
    recipe.add_loop("l", body, max_iter=3, until="converged")
    assert rules(recipe) == ["guard"]
    assert "convergence test" in reasons(recipe)


def test_a_scatter_whose_width_is_known_only_at_run_time_is_refused() -> None:
    class Listing(BaseModel):
        files: list[Path] = []

    class One(BaseModel):
        path: Path

    lister = Cab(
        name="ls",
        command="/bin/true",
        outputs_model=Listing,
        wranglers=[Wrangler(r"(.*)", "output", output="files")],
    )
    each = Cab(name="each", command="/bin/true", inputs_model=One)
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("ls", lister, {}),
            StepRef("each", each, {"path": OutputRef("ls", "files")}, scatter=("path",)),
        ],
    )
    assert sorted(rules(recipe)) == ["crossing", "scatter"]


def test_nested_recipes_are_checked_inside() -> None:
    @pystep
    def py(path: Path) -> None:
        return None

    inner = Recipe(
        name="inner", inputs_model=PathIn, steps=[StepRef("py", py, {"path": InputRef("path")})]
    )
    outer = Recipe(name="outer", steps=[StepRef("sub", inner, {"path": Path("x")})])
    found = check_offloadable(plan_of(outer))
    assert [r.rule for r in found] == ["pystep"] and "'sub.py'" in found[0].reason


def test_a_path_from_a_nested_recipe_crosses_fine() -> None:
    inner = Recipe(
        name="inner",
        inputs_model=PathIn,
        outputs_model=PathOut,
        steps=[StepRef("make", touch, {"path": InputRef("path")})],
        output_wiring={"path": OutputRef("make", "path")},
    )
    outer = Recipe(
        name="outer",
        steps=[
            StepRef("sub", inner, {"path": Path("x")}),
            StepRef("use", touch, {"path": OutputRef("sub", "path")}),
        ],
    )
    assert rules(outer) == []


def test_a_loop_body_breaking_a_rule_is_reported_once_not_per_iteration() -> None:
    counter = Cab(
        name="counter",
        command="/bin/echo",
        outputs_model=CountOut,
        wranglers=[Wrangler(r"(\d+)", "output", output="count")],
    )
    user = Cab(name="user", command="/bin/echo", inputs_model=CountIn, outputs_model=LoopOut)
    body = Recipe(
        name="body",
        outputs_model=LoopOut,
        steps=[
            StepRef("count", counter, {}),
            StepRef("use", user, {"count": OutputRef("count", "count")}),
        ],
        output_wiring={"image": OutputRef("use", "image"), "done": OutputRef("use", "done")},
    )
    recipe = Recipe(name="r")
    recipe.add_loop("l", body, max_iter=5, until="done")
    found = check_offloadable(plan_of(recipe))
    crossing = [r for r in found if r.rule == "crossing"]
    assert len(crossing) == 1
    assert "step 'use' of loop 'l', input 'count'" in crossing[0].reason


class FoundOut(BaseModel):
    found: Path | None = None


class ListOut(BaseModel):
    files: list[Path] | None = None


class ListIn(BaseModel):
    files: list[Path]


def test_a_run_time_value_inside_a_list_a_nested_recipe_returns_is_refused() -> None:
    """Handed on as ``[inner.outputs.find.found]``, the wrangled path was compiled
    into the script as its placeholder, ``'<inner.find.found>'``."""
    finder = Cab(
        name="finder",
        command="/bin/echo",
        outputs_model=FoundOut,
        wranglers=[Wrangler(r"picked: (\S+)", "output", output="found")],
    )
    inner = Recipe(
        name="inner",
        outputs_model=ListOut,
        steps=[StepRef("find", finder, {})],
        output_wiring={"files": [OutputRef("find", "found")]},
    )
    user = Cab(name="cat", command="/bin/cat", inputs_model=ListIn)
    outer = Recipe(
        name="outer",
        steps=[
            StepRef("inner", inner, {}),
            StepRef("use", user, {"files": OutputRef("inner", "files")}),
        ],
    )
    assert rules(outer) == ["crossing"] and "set by a wrangler" in reasons(outer)


def test_a_scattered_nested_recipe_is_refused() -> None:
    inner = Recipe(
        name="inner",
        inputs_model=PathIn,
        steps=[StepRef("make", touch, {"path": InputRef("path")})],
    )
    outer = Recipe(
        name="outer",
        steps=[StepRef("sub", inner, {"path": [Path("a"), Path("b")]}, scatter=("path",))],
    )
    assert "scatter" in rules(outer)
    assert "a nested recipe scattered over path" in reasons(outer)


def test_a_cab_whose_output_a_wrangler_judges_is_refused() -> None:
    """A job cannot read the output as ninja does: it would pass what `ninja run` fails."""
    solver = Cab(name="solve", command="/bin/echo", wranglers=[Wrangler(r"^ERROR:", "error")])
    recipe = Recipe(name="r", steps=[StepRef("solve", solver, {})])
    assert rules(recipe) == ["wrangler"] and "'^ERROR:'" in reasons(recipe)
    # every step that uses it is named, as every reason is listed (only the first was)
    twice = Recipe(name="r", steps=[StepRef("flag", solver, {}), StepRef("image", solver, {})])
    assert rules(twice) == ["wrangler", "wrangler"]
    assert "step 'flag'" in reasons(twice) and "step 'image'" in reasons(twice)


def test_an_empty_recipe_has_nothing_to_offload() -> None:
    assert rules(Recipe(name="empty")) == ["empty"]


def test_a_recipe_of_empty_nested_recipes_has_nothing_to_offload() -> None:
    """Submitted, it made a launch of no job that stayed 'unknown' and could not be cleaned."""
    empty = Recipe(name="inner")
    only = Recipe(name="only", steps=[StepRef("nest", empty, {})])
    assert rules(only) == ["empty"]
    some = Recipe(
        name="some", steps=[StepRef("nest", empty, {}), StepRef("t", touch, {"path": "x"})]
    )
    assert "empty" not in rules(some)


class Paths(BaseModel):
    paths: list[Path]


class Files(BaseModel):
    files: list[Path]


def test_a_step_reading_what_a_scattered_nested_recipe_gathered_is_refused_not_a_crash() -> None:
    """Scatter a field recipe, then summarise: it was an internal error (AssertionError, 70)."""
    inner = Recipe(name="inner", inputs_model=PathIn, outputs_model=PathOut)
    inner.add_step("t", touch, path=inner.inputs.path)
    inner.set_output("path", inner.outputs.t.path)
    gather = Cab(
        name="gather",
        command="/bin/cat",
        inputs_model=Files,
        field_meta={"files": ParamMeta(positional=True)},
    )
    pipe = Recipe(name="pipe", inputs_model=Paths)
    pipe.add_step("field", inner, scatter=["path"], path=pipe.inputs.paths)
    pipe.add_step("gather", gather, files=pipe.outputs.field.path)
    said = reasons(pipe, {"paths": ["a.txt", "b.txt"]})
    assert "field.path is gathered from a nested recipe scattered at run time" in said


def test_a_secret_input_is_refused_it_would_sit_in_clear_in_a_job_script() -> None:
    from pydantic import SecretStr

    class Secret(BaseModel):
        path: Path
        token: SecretStr

    cab = Cab("c", ["tool"], Secret, None, {"path": ParamMeta(positional=True)})
    recipe = Recipe(name="r", steps=[StepRef("s", cab, {"path": Path("x"), "token": "t0k"})])
    assert rules(recipe) == ["secret"]


class RmsOut(BaseModel):
    rms: float


class ImageOut(BaseModel):
    image: Path


class MaybeRmsOut(BaseModel):
    rms: float | None = None


def test_a_required_output_only_a_wrangler_fills_is_refused() -> None:
    """``ninja run`` fails the step when no printed line matched; a compiled job
    cannot read what the tool printed and completed instead (an audit's case)."""

    def recipe(outputs: type[BaseModel]) -> Recipe:
        measure = Cab(
            name="measure",
            command="/bin/echo",
            outputs_model=outputs,
            wranglers=[Wrangler(r"final rms: ([\d.]+)", "output", output="rms")],
        )
        return Recipe(name="r", steps=[StepRef("m", measure, {})])

    assert rules(recipe(RmsOut)) == ["wrangler"]
    # a template and a wrangler on one output: refused where the cab is made
    # (test_output_sources.py)
    said = reasons(recipe(RmsOut))
    assert "output 'rms' is required and only its wrangler" in said
    assert "give the output a default" in said
    assert rules(recipe(MaybeRmsOut)) == []
