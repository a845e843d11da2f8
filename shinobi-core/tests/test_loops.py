"""add_loop: unrolled into NAME.i.STEP / NAME.i, stopped by an until path, with
later iterations recorded as skipped and doing no work."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import shinobi
from shinobi.config import load_config
from shinobi.graph import RecipeGraphError, build_graph
from shinobi.loaders import build_model
from shinobi.runner import run_recipe
from shinobi.steps import MS, Cab, File, ParamMeta, Recipe

Ninja = Callable[..., subprocess.CompletedProcess[str]]


class CalIn(BaseModel):
    ms: MS
    cycle: int = 0


class CalOut(BaseModel):
    ms: MS


class AssessIn(BaseModel):
    ms: MS
    cycle: int = 0
    need: int = 3


class AssessOut(BaseModel):
    converged: File | None = None


positional = {k: ParamMeta(positional=True) for k in ("ms", "cycle", "need")}
calibrate = Cab(
    "calibrate",
    ["/bin/sh", "-c", 'echo "calibrate $2" >> "$1/log"; echo x >> "$1/gain"', "cal"],
    CalIn,
    CalOut,
    {"cycle": positional["cycle"], "ms": ParamMeta(positional=True, mutable=True)},
)


def assessor(otherwise: str) -> Cab:
    """Writes the flag once the MS was calibrated ``$3`` times, else runs ``otherwise``."""
    return Cab(
        "assess",
        [
            "/bin/sh",
            "-c",
            'echo "assess $2" >> "$1/log"; n=$(wc -l < "$1/gain");'
            f' if [ "$n" -ge "$3" ]; then touch "$1/converged"; else {otherwise}; fi',
            "assess",
        ],
        AssessIn,
        AssessOut,
        {**positional, "converged": ParamMeta(implicit="{ms}/converged")},
    )


assess = assessor('rm -f "$1/converged"')
#: Writes the flag once converged and never removes it, as many tools do.
keep_flag = assessor("true")


class CycleIn(BaseModel):
    ms: MS
    cycle: int = 0
    need: int = 3


class CycleOut(BaseModel):
    ms: MS
    converged: File | None = None


def make_cycle(assessing: Cab = assess) -> Recipe:
    cycle = Recipe("cycle", CycleIn, CycleOut)
    cycle.add_step("calibrate", calibrate, ms=cycle.inputs.ms, cycle=cycle.inputs.cycle)
    cycle.add_step(
        "assess",
        assessing,
        ms=cycle.outputs.calibrate.ms,
        cycle=cycle.inputs.cycle,
        need=cycle.inputs.need,
    )
    cycle.set_output("ms", cycle.outputs.calibrate.ms)
    cycle.set_output("converged", cycle.outputs.assess.converged)
    return cycle


class PipeIn(BaseModel):
    ms: MS
    need: int = 3


class PipeOut(BaseModel):
    ms: MS
    converged: File | None = None


def make_pipe(max_iter: int = 6, cycle: Recipe | None = None, **loop: Any) -> Recipe:
    pipe = Recipe("pipe", PipeIn, PipeOut)
    handle = pipe.add_loop(
        "selfcal",
        cycle or make_cycle(),
        max_iter=max_iter,
        until="converged",
        carry={"ms": "ms"},
        index_input="cycle",
        ms=pipe.inputs.ms,
        need=pipe.inputs.need,
        **loop,
    )
    pipe.set_output("ms", handle.outputs.ms)
    pipe.set_output("converged", handle.outputs.converged)
    return pipe


def config() -> Any:
    return load_config({"cache.enabled": False})


def test_a_recipe_body_unrolls_into_name_i_step() -> None:
    graph = build_graph(make_pipe(max_iter=3))
    names = [n.name for n in graph.nodes]
    assert names == [f"selfcal.{k}.{s}" for k in (1, 2, 3) for s in ("calibrate", "assess")]
    node = graph.node("selfcal.2.calibrate")
    assert node.loop == "selfcal" and node.iteration == 2
    assert node.previous == "selfcal.1.calibrate"
    assert node.wiring["cycle"] == 2
    # the guard of iteration 2 is iteration 1's until path
    assert str(node.guard) == "selfcal.1.assess.converged"


def test_it_converges_and_later_iterations_do_no_work(tmp_path: Path) -> None:
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    result = run_recipe(make_pipe(), {"ms": str(ms), "need": 3}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    log = (ms / "log").read_text().split("\n")
    assert log[:-1] == [f"{tool} {k}" for k in (1, 2, 3) for tool in ("calibrate", "assess")]
    statuses = {s.name: s.status for s in result.steps}
    for k in (1, 2, 3):
        assert statuses[f"selfcal.{k}.calibrate"] == statuses[f"selfcal.{k}.assess"] == "ok"
    for k in (4, 5, 6):
        for step in ("calibrate", "assess"):
            assert statuses[f"selfcal.{k}.{step}"] == "skipped"
    skipped = next(s for s in result.steps if s.name == "selfcal.4.assess")
    assert skipped.details["reason"] == "loop 'selfcal' converged before iteration 4"
    # loop.outputs resolve to the final iteration, which passed iteration 3's through
    assert result.outputs == {"ms": ms, "converged": ms / "converged"}
    assert result.warnings == []


def test_a_loop_that_converges_in_its_last_iteration_is_not_warned_about(tmp_path: Path) -> None:
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    pipe = make_pipe(max_iter=3)
    result = run_recipe(pipe, {"ms": str(ms), "need": 3}, cwd=tmp_path, config=config())
    assert result.ok and (ms / "converged").exists()
    assert result.warnings == []


def test_a_loop_that_never_converges_runs_max_iter_times(tmp_path: Path) -> None:
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    result = run_recipe(
        make_pipe(max_iter=2), {"ms": str(ms), "need": 99}, cwd=tmp_path, config=config()
    )
    assert result.ok, result.error
    assert (ms / "log").read_text().count("calibrate") == 2
    assert all(s.status == "ok" for s in result.steps)
    assert not (ms / "converged").exists()
    (said,) = result.warnings  # it succeeds, but the user has to know
    assert said.startswith("loop 'selfcal' ran all 2 iterations without converging")


class Count(BaseModel):
    value: int
    done: Path | None = None  # where the flag goes, made or not: the until test


class CountIn(BaseModel):
    value: int
    marker: Path
    cycle: int


counter = Cab(
    "counter",
    [
        "/bin/sh",
        "-c",
        'echo "$3" >> "$2.log"; v=$(( $1 + 1 )); echo "value:$v";'
        ' [ "$v" -ge 3 ] && touch "$2"; exit 0',
        "counter",
    ],
    CountIn,
    build_model("CountOut", {"value": ("int", False, None), "done": ("File", False, None)}),
    {k: ParamMeta(positional=True) for k in ("value", "marker", "cycle")}
    | {"done": ParamMeta(implicit="{marker}")},
    wranglers=[shinobi.Wrangler(r"^value:(\d+)$", "output", output="value")],
)


def test_a_cab_body_is_one_step_per_iteration(tmp_path: Path) -> None:
    class In(BaseModel):
        start: int = 0

    class Out(BaseModel):
        value: int

    recipe = Recipe("count", In, Out)
    loop = recipe.add_loop(
        "up",
        counter,
        max_iter=5,
        until="done",
        carry={"value": "value"},
        index_input="cycle",
        value=recipe.inputs.start,
        marker=str(tmp_path / "done"),
    )
    recipe.set_output("value", loop.outputs.value)
    assert [n.name for n in build_graph(recipe).nodes] == [f"up.{k}" for k in range(1, 6)]
    result = run_recipe(recipe, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs == {"value": 3}
    assert (tmp_path / "done.log").read_text().split() == ["1", "2", "3"]
    assert [s.status for s in result.steps] == ["ok", "ok", "ok", "skipped", "skipped"]


@shinobi.pystep
def halve(x: float, stop: Path, cycle: int) -> Count:
    value = int(x // 2)
    if value <= 1:
        stop.write_text(f"stopped at cycle {cycle}")
    return Count(value=value, done=stop)


def test_a_pystep_body_with_index_input(tmp_path: Path) -> None:
    class In(BaseModel):
        x: float

    class Out(BaseModel):
        value: int

    recipe = Recipe("halving", In, Out)
    loop = recipe.add_loop(
        "halve",
        halve,
        max_iter=10,
        until="done",
        carry={"value": "x"},
        index_input="cycle",
        x=recipe.inputs.x,
        stop=str(tmp_path / "stop"),
    )
    recipe.set_output("value", loop.outputs.value)
    result = run_recipe(recipe, {"x": 40}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs == {"value": 1}  # 40 -> 20 -> 10 -> 5 -> 2 -> 1
    assert (tmp_path / "stop").read_text() == "stopped at cycle 5"
    assert [s.name for s in result.steps if s.status == "skipped"] == [
        f"halve.{k}" for k in range(6, 11)
    ]


def test_a_stepref_body_stands_for_its_step(tmp_path: Path) -> None:
    """recipes.txt names "a StepRef from @shinobi.pystep" as a loop body; one was
    refused as "the body must be a Recipe, a Cab or a pystep"."""
    from shinobi.steps import StepRef

    class In(BaseModel):
        x: float

    class Out(BaseModel):
        value: int

    recipe = Recipe("halving", In, Out)
    body = StepRef(name="h", step=halve, wiring={"stop": str(tmp_path / "stop")})
    loop = recipe.add_loop(
        "halve",
        body,
        max_iter=10,
        until="done",
        carry={"value": "x"},
        index_input="cycle",
        x=recipe.inputs.x,
    )
    recipe.set_output("value", loop.outputs.value)
    result = run_recipe(recipe, {"x": 40}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs == {"value": 1}


def test_a_stepref_body_keeps_what_it_said_for_itself(tmp_path: Path) -> None:
    """Its backend=, venv= and resources= were dropped: a step declared to run in a
    venv ran on the host, and its scatter= was read as a plain list input."""
    from shinobi.resources import Resources
    from shinobi.steps import StepRef

    class In(BaseModel):
        x: float = 4

    body = StepRef(
        name="h",
        step=halve,
        wiring={"stop": str(tmp_path / "stop")},
        backend="venv",
        venv=str(tmp_path / "no-venv"),
        resources=Resources(cpus=2, memory="1GiB"),
    )
    recipe = Recipe("halving", In)
    recipe.add_loop("halve", body, max_iter=2, until="done", index_input="cycle", x=recipe.inputs.x)
    graph = build_graph(recipe)
    for node in graph.nodes:
        assert (node.backend, node.venv) == ("venv", str(tmp_path / "no-venv"))
        assert node.resources is not None and node.resources.cpus == 2
    scattered = Recipe("scattered", In)
    many = StepRef(name="h", step=halve, wiring={"x": [1.0, 2.0]}, scatter=("x",))
    scattered.add_loop("halve", many, max_iter=2, until="done", index_input="cycle")
    with pytest.raises(RecipeGraphError, match="the body scatters; a loop body may not"):
        build_graph(scattered)


def test_a_loop_inside_a_nested_recipe(tmp_path: Path) -> None:
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    outer = Recipe("outer", PipeIn, PipeOut)
    outer.add_step("inner", make_pipe(max_iter=4), ms=outer.inputs.ms, need=2)
    outer.set_output("ms", outer.outputs.inner.ms)
    outer.set_output("converged", outer.outputs.inner.converged)
    result = run_recipe(outer, {"ms": str(ms)}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert (ms / "log").read_text().count("calibrate") == 2
    inner_steps = result.steps[0].details["steps"]
    assert [s.status for s in inner_steps].count("skipped") == 4


# -- what a loop body may not be -------------------------------------------------


def loop_error(**change: Any) -> str:
    body = change.pop("body", make_cycle())
    spec: dict[str, Any] = dict(
        max_iter=3, until="converged", carry={"ms": "ms"}, index_input="cycle", ms="x.ms"
    )
    spec.update(change)
    recipe = Recipe("pipe", PipeIn)
    recipe.add_loop("selfcal", body, **spec)
    with pytest.raises(RecipeGraphError) as info:
        build_graph(recipe)
    return str(info.value)


def test_until_must_be_an_output_of_the_body() -> None:
    assert loop_error(until="convergd") == (
        "recipe 'pipe', loop 'selfcal': until='convergd' is not an output of the body;"
        " did you mean 'converged'?"
    )


def test_carry_must_be_a_fixed_point() -> None:
    assert "carry names 'image', which is not an output of the body" in loop_error(
        carry={"image": "ms"}
    )
    assert "carry feeds 'msx', which is not an input of the body; did you mean 'ms'?" in loop_error(
        carry={"ms": "msx"}
    )


def test_carry_is_an_explicit_mapping() -> None:
    assert "carry must map a body output to the body input it feeds" in loop_error(carry=["ms"])


def test_index_input_rules() -> None:
    assert "index_input='cycl' is not an input of the body" in loop_error(index_input="cycl")
    assert "index_input='ms' is also carried" in loop_error(index_input="ms")
    assert "'cycle' is the index_input, which the loop sets itself" in loop_error(cycle=1)


def test_every_required_body_input_needs_a_first_value() -> None:
    recipe = Recipe("pipe", PipeIn)
    recipe.add_loop("selfcal", make_cycle(), max_iter=2, until="converged", carry={"ms": "ms"})
    with pytest.raises(RecipeGraphError) as info:
        build_graph(recipe)
    message = str(info.value)
    assert (
        "loop 'selfcal': the body's input 'ms' is required but iteration 1 gets no value" in message
    )
    assert "pass ms=... to add_loop" in message


def test_unknown_loop_inputs_are_named() -> None:
    assert "'mss' is not an input of the body; did you mean 'ms'?" in loop_error(mss="y")


def test_max_iter_must_be_a_positive_whole_number() -> None:
    assert "max_iter must be a whole number >= 1, not 0" in loop_error(max_iter=0)
    assert "max_iter must be a whole number >= 1, not True" in loop_error(max_iter=True)


def test_a_body_may_not_scatter_or_nest_recipes_or_loops() -> None:
    scattering = make_cycle()
    scattering.steps[0].scatter = ("ms",)
    assert "body step 'calibrate' scatters; a loop body may not contain scatter" in loop_error(
        body=scattering
    )
    nesting = make_cycle()
    nesting.add_step("deeper", make_cycle(), ms="x")
    assert "body step 'deeper' is a nested recipe or loop" in loop_error(body=nesting)
    looping = make_cycle()
    looping.add_loop("again", make_cycle(), max_iter=2, until="converged", ms="x")
    assert "body step 'again' is a nested recipe or loop" in loop_error(body=looping)

    @shinobi.pystep(scatter=["x"])
    def each(x: int, cycle: int = 0) -> Count:
        return Count(value=x, done=Path("d"))

    recipe = Recipe("pipe", PipeIn)
    recipe.add_loop("each", each, max_iter=2, until="done", carry={"value": "x"}, x=1)
    with pytest.raises(RecipeGraphError, match="loop 'each': the body scatters"):
        build_graph(recipe)


def test_a_body_step_whose_own_decorator_scatters_is_refused_too() -> None:
    """Only a scatter set on the body's StepRef was refused: one the pystep declared
    itself was dropped without a word, and each cycle got the whole list."""

    @shinobi.pystep(scatter=["ms"])
    def each(ms: int) -> File | None:
        return None

    body = make_cycle()
    body.add_step("each", each, ms=[1, 2])
    assert "body step 'each' scatters; a loop body may not contain scatter" in loop_error(body=body)


def test_a_required_until_path_output_is_refused() -> None:
    class StrictOut(BaseModel):
        converged: File

    strict = Cab("strict", "true", AssessIn, StrictOut, {"converged": ParamMeta(implicit="{ms}/c")})
    body = Recipe("cycle", CycleIn, CycleOut)
    body.add_step("assess", strict, ms=body.inputs.ms)
    body.set_output("ms", body.inputs.ms)
    body.set_output("converged", body.outputs.assess.converged)
    message = loop_error(body=body)
    assert "until='converged' is a required output of 'strict' ('converged')" in message
    assert "declare it optional (converged: File | None = None)" in message


class StrictOut(BaseModel):
    ms: MS
    converged: File


@shinobi.pystep
def judge(ms: MS, cycle: int = 0) -> StrictOut:
    return StrictOut(ms=ms, converged=Path("c.flag"))


class MaybeConverged(BaseModel):
    ms: MS
    converged: File | None  # required, but a cycle that has not converged returns None


@shinobi.pystep
def judge_or_none(ms: MS, cycle: int = 0) -> MaybeConverged:
    return MaybeConverged(ms=ms, converged=None)


def test_an_until_output_a_body_may_return_as_none_is_not_refused() -> None:
    recipe = Recipe("pipe", PipeIn)
    recipe.add_loop("selfcal", judge_or_none, max_iter=2, until="converged", ms="x.ms")
    build_graph(recipe)


def test_a_required_until_output_of_a_pystep_or_a_recipe_body_is_refused_too() -> None:
    """Only a cab's was: a pystep's or a recipe's loop could never converge."""
    message = loop_error(body=judge)
    assert "until='converged' is a required output of 'judge' ('converged')" in message
    body = Recipe("cycle", CycleIn, StrictOut)
    body.add_step(
        "assess", assess, ms=body.inputs.ms, cycle=body.inputs.cycle, need=body.inputs.need
    )
    body.set_output("ms", body.inputs.ms)
    body.set_output("converged", body.outputs.assess.converged)
    message = loop_error(body=body)
    assert "until='converged' is a required output of recipe 'cycle' ('converged')" in message


class Tally(BaseModel):
    values: list[int]
    done: File | None = None


def test_a_pysteps_until_must_name_a_path_output_too() -> None:
    """A pystep body has no cab, but its return annotation declares its outputs."""

    @shinobi.pystep
    def tally(values: list[int]) -> Tally:
        return Tally(values=values)

    pipe = Recipe("pipe")
    pipe.add_loop("it", tally, max_iter=3, until="values", carry={"values": "values"}, values=[])
    with pytest.raises(RecipeGraphError, match=r"until='values' is not a path output of 'tally'"):
        build_graph(pipe)
    fine = Recipe("pipe")
    fine.add_loop("it", tally, max_iter=3, until="done", carry={"values": "values"}, values=[])
    build_graph(fine)


def test_a_loop_whose_body_never_names_its_until_path_is_warned_in_words(
    tmp_path: Path,
) -> None:
    @shinobi.pystep
    def tally(values: list[int]) -> Tally:
        return Tally(values=[*values, 1])

    pipe = Recipe("pipe")
    pipe.add_loop("it", tally, max_iter=2, until="done", carry={"values": "values"}, values=[])
    once = Recipe("once")
    once.add_loop("it", tally, max_iter=1, until="done", carry={"values": "values"}, values=[])
    warned = run_recipe(pipe, workdir=tmp_path, use_cache=False).warnings
    assert any(
        "ran all 2 iterations without converging (the last iteration gave no until path)" in w
        for w in warned
    ), warned
    warned = run_recipe(once, workdir=tmp_path, use_cache=False).warnings
    assert any("ran its only iteration without converging" in w for w in warned), warned


def test_until_must_name_a_path_output() -> None:
    class Counted(BaseModel):
        ms: MS
        n: int | None = None

    counter = Cab("count", "/bin/true", CycleIn, Counted, {"ms": ParamMeta(positional=True)})
    pipe = Recipe("pipe", PipeIn)
    pipe.add_loop("it", counter, max_iter=3, until="n", carry={"ms": "ms"}, ms=pipe.inputs.ms)
    with pytest.raises(RecipeGraphError, match=r"until='n' is not a path output of 'count'"):
        build_graph(pipe)


def test_a_loop_and_a_step_cannot_share_a_name() -> None:
    recipe = Recipe("pipe", PipeIn)
    recipe.add_step("selfcal", calibrate, ms="x")
    recipe.add_loop(
        "selfcal", make_cycle(), max_iter=2, until="converged", carry={"ms": "ms"}, ms="x"
    )
    with pytest.raises(
        RecipeGraphError, match="loop 'selfcal': the name is already used by a step"
    ):
        build_graph(recipe)


def test_a_step_declared_after_a_loop_of_the_same_name_is_refused() -> None:
    """Only the other order was refused: a later step 'selfcal' was let through, and
    a reference to selfcal's output silently read the loop's, not the step's."""
    recipe = Recipe("pipe", PipeIn)
    recipe.add_loop(
        "selfcal", make_cycle(), max_iter=2, until="converged", carry={"ms": "ms"}, ms="x"
    )
    recipe.add_step("selfcal", calibrate, ms="y")
    recipe.add_step("after", calibrate, ms=recipe.outputs.selfcal.ms)
    with pytest.raises(
        RecipeGraphError, match="step 'selfcal': the name is already used by a loop"
    ):
        build_graph(recipe)


def test_a_reference_to_a_missing_loop_output_is_named() -> None:
    recipe = make_pipe(max_iter=2)
    recipe.add_step("after", calibrate, ms=recipe.outputs.selfcal.mss)
    with pytest.raises(
        RecipeGraphError, match=r"loop 'selfcal' has no output 'mss'; did you mean 'ms'\?"
    ):
        build_graph(recipe)


def test_a_misspelled_loop_name_gets_a_suggestion() -> None:
    """A loop's name is no step of the graph (its steps are selfcal.1.calibrate...),
    so the suggestion must look among the loops too."""
    recipe = make_pipe(max_iter=2)
    recipe.add_step("after", calibrate, ms=recipe.outputs.selfcla.ms)
    with pytest.raises(
        RecipeGraphError, match=r"'selfcla', which does not exist; did you mean 'selfcal'\?"
    ):
        build_graph(recipe)


BAD = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe, MS, File

class In(BaseModel):
    ms: File = "x.ms"
    cycle: int = 0

class Out(BaseModel):
    ms: File | None = None  # the input's path, passed through
    converged: File | None = None

tool = Cab("tool", ["/bin/touch", "ran"], In, Out)
pipe = Recipe("pipe", In)
pipe.add_step("first", Cab("first", ["/bin/touch", "first-ran"]))
pipe.add_loop("selfcal", tool, max_iter=3, until="converged", carry={"ms": "mss"}, ms="x.ms")
"""


def test_ninja_refuses_a_bad_loop_before_anything_runs(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    recipe_file(BAD)
    done = ninja("run", "recipe.py:pipe")
    assert done.returncode == 2
    assert done.stderr == (
        "ninja: error: recipe 'pipe', loop 'selfcal': carry feeds 'mss', which is not an input"
        " of the body; did you mean 'ms'? (a carried value must be both an output and an input"
        " of the body)\n"
    )
    assert not (tmp_path / "first-ran").exists()


def test_the_dryrun_draws_every_iteration(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    recipe_file(BAD.replace('"mss"', '"ms"'))
    done = ninja("run", "recipe.py:pipe", "--dryrun")
    assert done.returncode == 0, done.stderr
    for k in (1, 2, 3):
        assert f"selfcal.{k}" in done.stdout
        assert f"loop 'selfcal', iteration {k} of up to 3" in done.stdout
    assert (
        "skipped if selfcal.2.converged exists (the loop converged), passing on selfcal.2"
        in done.stdout
    )
    assert not (tmp_path / "first-ran").exists()


def test_add_loop_takes_its_first_arguments_in_order_too() -> None:
    recipe = Recipe("pipe", PipeIn)
    loop = recipe.add_loop("sc", make_cycle(), 2, "converged", {"ms": "ms"}, "cycle", ms="x.ms")
    assert loop.name == "sc" and loop.spec.max_iter == 2 and loop.spec.index_input == "cycle"
    assert [n.name for n in build_graph(recipe).nodes][-1] == "sc.2.assess"


class ReportIn(BaseModel):
    ms: MS
    after: Path
    cycle: int = 0


report = Cab(
    "report",
    ["/bin/sh", "-c", 'echo "report $2" >> "$1/log"', "report"],
    ReportIn,
    None,
    {
        "ms": ParamMeta(positional=True),
        "cycle": ParamMeta(positional=True),
        "after": ParamMeta(skip=True),
    },
)


def test_a_step_after_the_convergence_test_still_runs_in_the_converging_iteration(
    tmp_path: Path,
) -> None:
    """``report`` waits for ``assess``, which writes the flag in iteration 3: the
    loop converged in that iteration, not before it, so ``report`` still runs."""
    cycle = make_cycle()
    cycle.add_step(
        "report",
        report,
        ms=cycle.outputs.calibrate.ms,
        after=cycle.outputs.assess.converged,
        cycle=cycle.inputs.cycle,
    )
    pipe = make_pipe(max_iter=5, cycle=cycle)
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    result = run_recipe(pipe, {"ms": str(ms), "need": 3}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    statuses = {s.name: s.status for s in result.steps}
    assert statuses["selfcal.3.report"] == "ok"
    assert statuses["selfcal.4.calibrate"] == statuses["selfcal.4.report"] == "skipped"
    assert (ms / "log").read_text().splitlines()[-1] == "report 3"


def flag_keeping_pipe(max_iter: int = 6) -> Recipe:
    return make_pipe(max_iter=max_iter, cycle=make_cycle(keep_flag))


def assessed(ms: Path) -> list[str]:
    return [line for line in (ms / "log").read_text().splitlines() if line.startswith("assess")]


def test_a_flag_left_by_an_earlier_run_does_not_end_the_loop(tmp_path: Path) -> None:
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    (ms / "converged").touch()  # from yesterday's run
    result = run_recipe(
        flag_keeping_pipe(), {"ms": str(ms), "need": 3}, cwd=tmp_path, config=config()
    )
    assert result.ok, result.error
    assert assessed(ms) == ["assess 1", "assess 2", "assess 3"]
    statuses = {s.name: s.status for s in result.steps}
    assert statuses["selfcal.3.assess"] == "ok"
    assert statuses["selfcal.4.calibrate"] == "skipped"
    assert result.warnings == []


def test_a_flag_left_by_an_earlier_run_is_no_convergence_in_the_last_iteration(
    tmp_path: Path,
) -> None:
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    (ms / "converged").touch()  # from yesterday's run, and never rewritten today
    result = run_recipe(
        flag_keeping_pipe(max_iter=2), {"ms": str(ms), "need": 99}, cwd=tmp_path, config=config()
    )
    assert result.ok, result.error
    assert assessed(ms) == ["assess 1", "assess 2"]
    (said,) = result.warnings
    assert "ran all 2 iterations without converging" in said


def test_an_until_path_the_loop_is_given_is_left_as_it_is(tmp_path: Path) -> None:
    """Nothing is removed: a flag handed in and never rewritten ends no cycle."""
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    flag = tmp_path / "given.flag"
    flag.write_text("keep me")

    class GivenIn(BaseModel):
        flag: File
        cycle: int = 0

    class GivenOut(BaseModel):
        flag: File | None = None

    hand_on = Cab("hand_on", "/bin/true", GivenIn, GivenOut, {"flag": ParamMeta(skip=True)})
    pipe = Recipe("pipe", PipeIn)
    pipe.add_loop("l", hand_on, max_iter=2, until="flag", index_input="cycle", flag=str(flag))
    result = run_recipe(pipe, {"ms": str(ms)}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert flag.read_text() == "keep me"
    assert [s.status for s in result.steps] == ["ok", "ok"]  # both cycles ran


#: Writes PREFIX.flag from cycle 2 on, unless told it is the "second" call of a cycle.
WRITER = 'echo "$0 $1 $2" >> log; if [ "$1" -ge 2 ] && [ "$2" = first ]; then touch "$0".flag; fi'


class StampIn(BaseModel):
    prefix: str = "pt"
    cycle: int = 0
    which: str = "first"


class FlagOut(BaseModel):
    flag: File | None = None


writer = Cab(
    "writer",
    ["/bin/sh", "-c", WRITER],
    StampIn,
    FlagOut,
    {
        "prefix": ParamMeta(positional=True),
        "cycle": ParamMeta(positional=True),
        "which": ParamMeta(positional=True),
        "flag": ParamMeta(implicit="{prefix}.flag"),
    },
)


class PassIn(BaseModel):
    flag: File | None = None


hand_over = Cab("hand_over", "/bin/true", PassIn, FlagOut, {"flag": ParamMeta(skip=True)})


def cycles_run(tmp_path: Path) -> list[str]:
    return (tmp_path / "log").read_text().split("\n")[:-1]


def test_a_flag_another_step_of_the_cycle_writes_ends_the_loop(tmp_path: Path) -> None:
    """The body's until output comes from a step that only hands the path on."""
    body = Recipe("body", StampIn, FlagOut)
    body.add_step("write", writer, cycle=body.inputs.cycle)
    body.add_step("hand", hand_over, flag=body.outputs.write.flag)
    body.set_output("flag", body.outputs.hand.flag)
    pipe = Recipe("pipe", StampIn, FlagOut)
    pipe.add_loop("l", body, max_iter=4, until="flag", index_input="cycle")
    assert run_recipe(pipe, cwd=tmp_path, config=config()).ok
    assert cycles_run(tmp_path) == ["pt 1 first", "pt 2 first"]


def test_a_flag_an_earlier_ctx_run_wrote_ends_the_loop(tmp_path: Path) -> None:
    @shinobi.step(writer)
    def twice(ctx: Any) -> Any:
        ctx.run()
        return ctx.run(which="second")  # its until output is the flag the first call wrote

    pipe = Recipe("pipe", StampIn, FlagOut)
    pipe.add_loop("l", twice, max_iter=4, until="flag", index_input="cycle")
    assert run_recipe(pipe, cwd=tmp_path, config=config()).ok
    assert cycles_run(tmp_path) == ["pt 1 first", "pt 1 second", "pt 2 first", "pt 2 second"]


@pytest.mark.parametrize("old_flag", [False, True])
def test_a_cached_rerun_converges_where_the_run_did_and_runs_nothing(
    tmp_path: Path, old_flag: bool
) -> None:
    """On the re-run cycle 1 comes from the cache while a flag is on disk (cycle 2's,
    and with ``old_flag`` one that was already there through the first run's
    cycle 1): only a cycle whose cached result changed the flag ends the loop."""
    if old_flag:
        (tmp_path / "pt.flag").write_text("")  # what the tool writes too: same size
    pipe = Recipe("pipe", StampIn, FlagOut)
    pipe.add_loop("l", writer, max_iter=4, until="flag", index_input="cycle")
    cached = load_config({"cache.enabled": True, "cache.dir": str(tmp_path / "cache")})
    first = run_recipe(pipe, cwd=tmp_path, config=cached)
    again = run_recipe(pipe, cwd=tmp_path, config=cached)
    assert [s.status for s in first.steps] == ["ok", "ok", "skipped", "skipped"]
    assert [s.status for s in again.steps] == ["cached", "cached", "skipped", "skipped"]
    assert cycles_run(tmp_path) == ["pt 1 first", "pt 2 first"]  # the re-run ran nothing


def test_a_body_input_called_name_can_be_wired_through_add_loop(tmp_path: Path) -> None:
    class Named(BaseModel):
        name: str
        cycle: int = 0

    namer = Cab(
        "namer",
        ["/bin/sh", "-c", 'echo "$0 $1" >> log'],
        Named,
        FlagOut,
        {"name": ParamMeta(positional=True), "cycle": ParamMeta(positional=True)},
    )
    pipe = Recipe("pipe", StampIn, FlagOut)
    pipe.add_loop("l", namer, max_iter=2, until="flag", index_input="cycle", name="wsclean")
    assert run_recipe(pipe, cwd=tmp_path, config=config()).ok
    assert cycles_run(tmp_path) == ["wsclean 1", "wsclean 2"]


class StepLogIn(BaseModel):
    word: str = "cal"
    cycle: int = 0


class StepLogOut(BaseModel):
    pass


say = Cab(
    "say",
    ["/bin/sh", "-c", 'sleep 0.2; echo "$1 $2" >> log', "say"],
    StepLogIn,
    StepLogOut,
    {"word": ParamMeta(positional=True), "cycle": ParamMeta(positional=True)},
)


class RaiseIn(BaseModel):
    flag: File
    cycle: int = 0


raise_flag = Cab(
    "raise_flag",
    ["/bin/sh", "-c", 'sleep 0.5; echo "assess $2" >> log; touch "$1"', "assess"],
    RaiseIn,
    StepLogOut,
    {"flag": ParamMeta(positional=True, mutable=True), "cycle": ParamMeta(positional=True)},
)


class HandedIn(BaseModel):
    cycle: int = 1
    flag: File | None = None


class HandedOut(BaseModel):
    converged: File | None = None


@pytest.mark.parametrize("workers", [1, 2])
def test_a_handed_until_path_a_later_step_writes_ends_the_loop_after_that_cycle(
    tmp_path: Path, workers: int
) -> None:
    """The until output is the path the loop is handed: no step produces it, so
    only waiting for the whole cycle makes the next cycle see what it wrote."""
    body = Recipe("body", HandedIn, HandedOut)
    body.add_step("cal", say, cycle=body.inputs.cycle)
    body.add_step("assess", raise_flag, flag=body.inputs.flag, cycle=body.inputs.cycle)
    body.set_output("converged", body.inputs.flag)
    pipe = Recipe("pipe", max_workers=workers)
    pipe.add_loop("sc", body, max_iter=4, until="converged", index_input="cycle", flag="conv.flag")
    result = run_recipe(pipe, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert (tmp_path / "log").read_text().splitlines() == ["cal 1", "assess 1"]
    statuses = {s.name: s.status for s in result.steps}
    assert statuses["sc.2.cal"] == statuses["sc.4.assess"] == "skipped"


class TagIn(BaseModel):
    tag: str
    cycle: int = 0


class TagOut(BaseModel):
    converged: File | None = None


tagged = Cab(
    "tagged",
    ["/bin/sh", "-c", 'echo "$1 $2" >> log; [ "$2" -ge 2 ] && touch "$1.flag"; exit 0', "t"],
    TagIn,
    TagOut,
    {
        "tag": ParamMeta(positional=True),
        "cycle": ParamMeta(positional=True),
        "converged": ParamMeta(implicit="{tag}.flag"),
    },
)


class TagsIn(BaseModel):
    tags: list[str]


class OneTagIn(BaseModel):
    tag: str


def test_a_stale_flag_does_not_end_a_loop_inside_a_scattered_nested_recipe(
    tmp_path: Path,
) -> None:
    """Each slice runs its loop under its own name (``per[0].sc``): the flags
    noted before the run must be found under that name too."""
    inner = Recipe("inner", OneTagIn, TagOut)
    handle = inner.add_loop(
        "sc", tagged, max_iter=4, until="converged", index_input="cycle", tag=inner.inputs.tag
    )
    inner.set_output("converged", handle.outputs.converged)
    outer = Recipe("outer", TagsIn)
    outer.add_step("per", inner, scatter=["tag"], tag=outer.inputs.tags)
    (tmp_path / "a.flag").touch()  # left by an earlier run
    result = run_recipe(outer, {"tags": ["a", "b"]}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert sorted((tmp_path / "log").read_text().splitlines()) == ["a 1", "a 2", "b 1", "b 2"]


def test_a_long_loop_that_converges_early_skips_the_rest(tmp_path: Path) -> None:
    """Each skipped cycle makes the next one ready at once: 1,500 of them in a
    row must not exhaust Python's recursion limit."""
    pipe = Recipe("pipe", TagsIn)
    pipe.add_loop("sc", tagged, max_iter=1500, until="converged", index_input="cycle", tag="x")
    result = run_recipe(pipe, {"tags": []}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert (tmp_path / "log").read_text().splitlines() == ["x 1", "x 2"]
    assert sum(s.status == "skipped" for s in result.steps) == 1498


class _PrefixIn(BaseModel):
    prefix: str


class _MadeOut(BaseModel):
    out: File | None = None


class _BodyIn(BaseModel):
    prefix: str = "made-by-default"
    cycle: int = 1


def test_a_loop_body_recipe_s_own_input_defaults_apply_as_when_nested(tmp_path: Path) -> None:
    touch = Cab(
        "touch",
        "/bin/touch",
        _PrefixIn,
        _MadeOut,
        {"prefix": ParamMeta(positional=True), "out": ParamMeta(implicit="{prefix}")},
    )
    body = Recipe("body", _BodyIn, _MadeOut)
    body.add_step("t", touch, prefix=body.inputs.prefix)
    body.set_output("out", body.outputs.t.out)
    loop = Recipe("loop", outputs_model=_MadeOut)
    handle = loop.add_loop("lp", body, max_iter=2, until="out", index_input="cycle")
    loop.set_output("out", handle.outputs.out)
    result = run_recipe(loop, cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    assert result.outputs["out"] == Path("made-by-default")
    assert [s.status for s in result.steps] == ["ok", "skipped"]


def test_a_step_named_like_a_loop_iteration_is_refused_naming_the_iteration() -> None:
    """It was "the name is used twice (steps 1 and 3)": the user declared two things."""
    recipe = Recipe("count")
    recipe.add_step("up.2", counter, value=0, marker="m", cycle=9)
    recipe.add_loop(
        "up",
        counter,
        max_iter=3,
        until="done",
        carry={"value": "value"},
        index_input="cycle",
        value=0,
        marker="m",
    )
    with pytest.raises(RecipeGraphError) as info:
        build_graph(recipe)
    assert "'up.2': the name is how ninja names iteration 2 of loop 'up'" in str(info.value)
