"""Scatter: one slice per element, named step[k]; gathered lists downstream."""

from __future__ import annotations

import itertools
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import shinobi
from shinobi.config import load_config
from shinobi.errors import UsageError
from shinobi.graph import RecipeGraphError, build_graph
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe, StepResult

Ninja = Callable[..., subprocess.CompletedProcess[str]]

# Records its own start and end, then prints "out:<stamp>".
SCRIPT = 'date +%s.%N > "$1.start"; sleep "$2"; date +%s.%N > "$1.end"; echo "out:$1"'


class StampIn(BaseModel):
    stamp: str
    seconds: float = 0.0


class StampOut(BaseModel):
    said: str | None = None


stamp = Cab(
    "stamp",
    ["/bin/sh", "-c", SCRIPT, "stamp"],
    StampIn,
    StampOut,
    {"stamp": ParamMeta(positional=True), "seconds": ParamMeta(positional=True)},
    wranglers=[shinobi.Wrangler(r"^out:(.*)$", "output", output="said")],
)


class Stamps(BaseModel):
    stamps: list[str]


class Said(BaseModel):
    said: list[str]


def config(workers: int = 1) -> Any:
    return load_config({"execution.max_workers": workers, "cache.enabled": False})


def span(path: str) -> tuple[float, float]:
    return float(Path(f"{path}.start").read_text()), float(Path(f"{path}.end").read_text())


def fan(tmp_path: Path, workers: int, seconds: float = 0.0) -> tuple[Recipe, list[str]]:
    recipe = Recipe("fan", Stamps, Said, max_workers=workers)
    recipe.add_step("stamp", stamp, scatter=["stamp"], stamp=recipe.inputs.stamps, seconds=seconds)
    recipe.set_output("said", recipe.outputs.stamp.said)
    return recipe, [str(tmp_path / f"s{k}") for k in range(4)]


def test_four_slices_at_four_workers_overlap_and_gather_in_order(tmp_path: Path) -> None:
    recipe, stamps = fan(tmp_path, 4, seconds=0.5)
    result = run_recipe(recipe, {"stamps": stamps}, cwd=tmp_path, config=config(4))
    assert result.ok, result.error
    assert result.outputs["said"] == stamps  # gathered in slice order, whoever finished first
    spans = [span(s) for s in stamps]
    latest_start = max(start for start, _ in spans)
    earliest_end = min(end for _, end in spans)
    assert latest_start < earliest_end  # all four were running at one moment
    (step,) = result.steps
    assert [s.name for s in step.slices or []] == ["stamp[0]", "stamp[1]", "stamp[2]", "stamp[3]"]


def test_a_single_field_may_be_named_by_a_string(tmp_path: Path) -> None:
    recipe = Recipe("fan", Stamps, Said)
    recipe.add_step("stamp", stamp, scatter="stamp", stamp=recipe.inputs.stamps)
    recipe.set_output("said", recipe.outputs.stamp.said)
    stamps = [str(tmp_path / "a"), str(tmp_path / "b")]
    result = run_recipe(recipe, {"stamps": stamps}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs["said"] == stamps


def test_at_one_worker_slices_run_one_after_another(tmp_path: Path) -> None:
    recipe, stamps = fan(tmp_path, 1)
    assert run_recipe(recipe, {"stamps": stamps}, cwd=tmp_path, config=config()).ok
    spans = [span(s) for s in stamps]
    for a, b in itertools.pairwise(spans):
        assert a[1] <= b[0]


def test_each_slice_has_its_own_log(tmp_path: Path) -> None:
    recipe, stamps = fan(tmp_path, 2)
    assert run_recipe(recipe, {"stamps": stamps[:2]}, cwd=tmp_path, config=config(2)).ok
    (run_dir,) = (tmp_path / ".shinobi" / "runs").iterdir()
    assert (run_dir / "logs" / "stamp[0].out").read_text() == f"out:{stamps[0]}\n"
    assert (run_dir / "logs" / "stamp[1].out").read_text() == f"out:{stamps[1]}\n"


class PairIn(BaseModel):
    left: str
    right: int


class PairOut(BaseModel):
    joined: str | None = None


pair = Cab(
    "pair",
    ["/bin/sh", "-c", 'echo "joined:$1-$2"', "pair"],
    PairIn,
    PairOut,
    {"left": ParamMeta(positional=True), "right": ParamMeta(positional=True)},
    wranglers=[shinobi.Wrangler(r"^joined:(.*)$", "output", output="joined")],
)


class ListIn(BaseModel):
    items: list[str]


class ListOut(BaseModel):
    count: Any = None  # a count, or a list a tool reports only when it runs


count_all = Cab(
    "count_all",
    ["/bin/sh", "-c", 'echo "count:$#"', "count"],
    ListIn,
    ListOut,
    {"items": ParamMeta(positional=True)},
    wranglers=[shinobi.Wrangler(r"^count:(\d+)$", "output", output="count")],
)


class Pairs(BaseModel):
    lefts: list[str]
    rights: list[int]


class Chain(BaseModel):
    again: list[str]
    count: str


def test_fields_are_zipped_downstream_scatters_again_or_takes_the_whole_list(
    tmp_path: Path,
) -> None:
    recipe = Recipe("chain", Pairs, Chain, max_workers=3)
    recipe.add_step(
        "pair",
        pair,
        scatter=["left", "right"],
        left=recipe.inputs.lefts,
        right=recipe.inputs.rights,
    )
    # Scatter again over the gathered list ...
    recipe.add_step("again", pair, scatter=["left"], left=recipe.outputs.pair.joined, right=0)
    # ... or consume it whole.
    recipe.add_step("count", count_all, items=recipe.outputs.pair.joined)
    recipe.set_output("again", recipe.outputs.again.joined)
    recipe.set_output("count", recipe.outputs.count.count)
    result = run_recipe(
        recipe, {"lefts": ["a", "b", "c"], "rights": [1, 2, 3]}, cwd=tmp_path, config=config(3)
    )
    assert result.ok, result.error
    assert result.outputs == {"again": ["a-1-0", "b-2-0", "c-3-0"], "count": "3"}


def test_an_empty_list_scatters_into_no_slices_and_gathers_empty_lists(tmp_path: Path) -> None:
    recipe, _ = fan(tmp_path, 2)
    result = run_recipe(recipe, {"stamps": []}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs == {"said": []}


class Counted(BaseModel):
    said: list[str]
    runs: int


@pytest.mark.parametrize("workers", [1, 3])
def test_a_step_after_an_empty_scatter_runs_once_with_the_empty_list(
    tmp_path: Path, workers: int
) -> None:
    log = tmp_path / "count.log"

    @shinobi.pystep
    def count(parts: list[str]) -> int:
        with log.open("a") as fh:
            fh.write(f"{parts}\n")
        return len(parts)

    recipe = Recipe("fan", Stamps, Counted, max_workers=workers)
    recipe.add_step("stamp", stamp, scatter=["stamp"], stamp=recipe.inputs.stamps)
    recipe.add_step("count", count, parts=recipe.outputs.stamp.said)
    recipe.set_output("said", recipe.outputs.stamp.said)
    recipe.set_output("runs", recipe.outputs.count.result)
    result = run_recipe(recipe, {"stamps": []}, cwd=tmp_path, config=config(workers))
    assert result.ok, result.error
    assert result.outputs == {"said": [], "runs": 0}
    assert log.read_text() == "[]\n"
    assert [s.name for s in result.steps] == ["stamp", "count"]


class CodeIn(BaseModel):
    code: int


exiter = Cab(
    "exiter",
    ["/bin/sh", "-c", 'exit "$1"', "x"],
    CodeIn,
    field_meta={"code": ParamMeta(positional=True)},
)


class Codes(BaseModel):
    codes: list[int]


def test_a_failing_slice_fails_its_step_and_nothing_new_starts(tmp_path: Path) -> None:
    recipe = Recipe("r", Codes, max_workers=1)
    recipe.add_step("exit", exiter, scatter=["code"], code=recipe.inputs.codes)
    recipe.add_step("after", stamp, stamp=str(tmp_path / "after"))
    result = run_recipe(recipe, {"codes": [0, 3, 0]}, cwd=tmp_path, config=config())
    assert not result.ok
    assert result.failed_step == "exit"
    assert result.error == "slice 'exit[1]': exited with code 3"
    (step,) = [s for s in result.steps if s.name == "exit"]
    assert [s.name for s in step.slices or []] == ["exit[0]", "exit[1]"]  # exit[2] never ran


#: Notes that it started; slice 0 fails at once, and slice 1 runs on until the run
#: records slice 0's failure (the flag the observer below leaves then), so that the
#: failure is in while slice 1 still runs and a worker is free.
FIRST_WAVE = (
    'touch "started.$1"; [ "$1" = 0 ] && exit 3; i=0;'
    ' while [ "$1" = 1 ] && [ ! -e failed.0 ] && [ $i -lt 2000 ];'
    " do sleep 0.01; i=$((i+1)); done"
)


class FlagsFailedSlices:
    """Leaves ``failed.<k>`` in ``folder`` as the run records slice k's failure."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def step_started(self, name: str, info: dict[str, Any]) -> None:
        pass

    def step_finished(self, result: StepResult) -> None:
        if not result.ok and result.name.startswith("w["):
            (self.folder / f"failed.{result.name[2:-1]}").touch()

    def warning(self, message: str) -> None:
        pass


def test_a_failing_slice_stops_the_rest_while_another_slice_still_runs(tmp_path: Path) -> None:
    """At one worker nothing else runs when a slice fails, so only that case was
    covered: at two, the slice beside the failed one kept the step going and
    slices 2 to 5 all started after the failure."""
    work = Cab(
        "work",
        ["/bin/sh", "-c", FIRST_WAVE, "sh"],
        CodeIn,
        field_meta={"code": ParamMeta(positional=True)},
    )
    recipe = Recipe("r", Codes, max_workers=2)
    recipe.add_step("w", work, scatter=["code"], code=recipe.inputs.codes)
    result = run_recipe(
        recipe,
        {"codes": list(range(6))},
        cwd=tmp_path,
        config=config(2),
        observers=[FlagsFailedSlices(tmp_path)],
    )
    assert not result.ok and result.failed_step == "w"
    assert result.error == "slice 'w[0]': exited with code 3"
    assert sorted(p.name for p in tmp_path.glob("started.*")) == ["started.0", "started.1"]


def test_the_schema_describes_one_slice(tmp_path: Path) -> None:
    recipe = Recipe("r", Codes)
    recipe.add_step("exit", exiter, scatter=["code"], code=["0", "seven"])
    with pytest.raises(UsageError, match=r"recipe 'r', step 'exit\[1\]': input 'code'"):
        run_recipe(recipe, {"codes": []}, cwd=tmp_path, config=config())


class LooseOut(BaseModel):
    said: Any = None


def _scattered_over_said(outputs: type[BaseModel]) -> Recipe:
    upstream = Cab(
        "up",
        ["/bin/echo", "v:one"],
        outputs_model=outputs,
        wranglers=[shinobi.Wrangler(r"^v:(.*)$", "output", output="said")],
    )
    recipe = Recipe("r")
    recipe.add_step("up", upstream)
    recipe.add_step("fan", stamp, scatter=["stamp"], stamp=recipe.outputs.up.said)
    return recipe


def test_a_scattered_value_that_is_not_a_list_at_run_time_fails_the_step(tmp_path: Path) -> None:
    """An output declared ``Any`` may be a list: only the run can tell."""
    result = run_recipe(_scattered_over_said(LooseOut), cwd=tmp_path, config=config())
    assert not result.ok
    assert result.error == "scattered input 'stamp' must be a list at run time, got str"


def test_a_scatter_over_an_output_declared_one_value_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    """Declared ``str``, it is never a list: refused before ``up`` runs for it."""
    with pytest.raises(RecipeGraphError) as info:
        run_recipe(_scattered_over_said(StampOut), cwd=tmp_path, config=config())
    assert str(info.value) == (
        "recipe 'r', step 'fan', input 'stamp': is scattered over the output 'said' of step"
        " 'up', declared str: one value, no list to give each slice an item of; scatter over"
        " a list, or do not scatter over this input"
    )


def test_lengths_from_upstream_that_disagree_name_fields_and_lengths(tmp_path: Path) -> None:
    recipe = Recipe("r", Pairs)
    recipe.add_step("a", pair, scatter=["left"], left=recipe.inputs.lefts, right=0)
    recipe.add_step(
        "b",
        pair,
        scatter=["left", "right"],
        left=recipe.outputs.a.joined,
        right=recipe.inputs.rights,
    )
    # The gathered list of a step scattered over known lists is known before the
    # run: the mismatch is refused before step 'a' runs at all.
    with pytest.raises(
        UsageError,
        match=r"step 'b': .*: left has 2 \(output 'joined' of step 'a'\), right has 1 \(input 'rights'\)",
    ):
        run_recipe(recipe, {"lefts": ["x", "y"], "rights": [1]}, cwd=tmp_path, config=config())
    assert not list(tmp_path.iterdir())


def test_scatter_on_the_decorators() -> None:
    @shinobi.step(pair, scatter=["left"])
    def driven(ctx: Any) -> StepResult:
        return ctx.run()

    @shinobi.pystep(scatter=["x"])
    def square(x: int) -> int:
        return x * x

    recipe = Recipe("r", Pairs)
    recipe.add_step("driven", driven, left=recipe.inputs.lefts, right=1)
    recipe.add_step("square", square, x=recipe.inputs.rights)

    @recipe.step(pair, scatter=["right"], left="z", right=recipe.inputs.rights)
    def by_recipe(ctx: Any) -> StepResult:
        return ctx.run()

    recipe.add_step("whole", driven, scatter=[], left="z", right=1)  # add_step's wins
    graph = build_graph(recipe)
    assert [n.scatter for n in graph.nodes] == [("left",), ("x",), ("right",), ()]


@pytest.mark.parametrize("scatter", [[Recipe("r", Pairs).inputs.lefts], [1], 5])
def test_scatter_that_is_not_names_is_refused_where_it_is_declared(scatter: Any) -> None:
    recipe = Recipe("r", Pairs)
    with pytest.raises(TypeError, match=r"step 'b': scatter takes the names of the step's own"):
        recipe.add_step("b", pair, scatter=scatter, left=recipe.inputs.lefts, right=1)
    with pytest.raises(TypeError, match=r"not the reference inputs.lefts|not 1|not 5"):
        shinobi.step(pair, scatter=scatter)
    with pytest.raises(TypeError, match=r"^scatter takes the names of the step's own inputs"):
        shinobi.pystep(scatter=scatter)


def test_pystep_slices_run_and_gather(tmp_path: Path) -> None:
    @shinobi.pystep(scatter=["x"])
    def square(x: int) -> int:
        return x * x

    class Xs(BaseModel):
        xs: list[int]

    class Ys(BaseModel):
        ys: list[int]

    recipe = Recipe("r", Xs, Ys, max_workers=2)
    recipe.add_step("square", square, x=recipe.inputs.xs)
    recipe.set_output("ys", recipe.outputs.square.result)
    result = run_recipe(recipe, {"xs": [1, 2, 3]}, cwd=tmp_path, config=config())
    assert result.ok and result.outputs == {"ys": [1, 4, 9]}


# -- declarations that are refused before anything runs --------------------------


def test_scatter_over_a_field_the_step_lacks_names_step_and_field() -> None:
    recipe = Recipe("r", Stamps)
    recipe.add_step("s", stamp, scatter=["stamps"], stamp=recipe.inputs.stamps)
    with pytest.raises(
        RecipeGraphError,
        match=r"step 's': scatter names 'stamps', which is not an input of 'stamp'; did you mean 'stamp'\?",
    ):
        build_graph(recipe)


def test_scatter_over_an_unwired_field_is_refused() -> None:
    recipe = Recipe("r", Stamps)
    recipe.add_step("s", stamp, scatter=["seconds"], stamp="x")
    with pytest.raises(
        RecipeGraphError, match=r"step 's': scatter field 'seconds' is not wired to a list"
    ):
        build_graph(recipe)


MISMATCH = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class PairIn(BaseModel):
    left: str
    right: int

class Inputs(BaseModel):
    lefts: list[str]
    rights: list[int]

pair = Cab("pair", ["/bin/sh", "-c", "touch ran-$1", "p"], PairIn,
           field_meta={"left": ParamMeta(positional=True), "right": ParamMeta(positional=True)})
recipe = Recipe("r", Inputs)
recipe.add_step("first", Cab("first", ["/bin/touch", "first-ran"]))
recipe.add_step("pair", pair, scatter=["left", "right"], left=recipe.inputs.lefts,
                right=recipe.inputs.rights)
"""


def test_ninja_refuses_mismatched_lengths_before_anything_runs(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    recipe_file(MISMATCH)
    done = ninja("run", "recipe.py:recipe", "--lefts", "a", "--lefts", "b", "--rights", "1")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("ninja: error: ")
    assert (
        "step 'pair': scattered inputs must have the same length: left has 2 (input 'lefts'),"
        " right has 1 (input 'rights')" in done.stderr
    )
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "first-ran").exists()


def test_ninja_refuses_a_scalar_where_a_list_is_scattered(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    recipe_file(
        MISMATCH.replace("lefts: list[str]", "lefts: str").replace(
            "rights: list[int]", "rights: list[int] = [1]"
        )
    )
    done = ninja("run", "recipe.py:recipe", "--lefts", "a")
    assert done.returncode == 2, done.stderr
    said = "step 'pair', input 'left': is scattered over the recipe's input 'lefts', declared str"
    assert said in done.stderr
    assert not (tmp_path / "first-ran").exists()


def test_the_dryrun_counts_slices(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    recipe_file(MISMATCH)
    done = ninja(
        "run",
        "recipe.py:recipe",
        "--lefts",
        "a",
        "--lefts",
        "b",
        "--rights",
        "1",
        "--rights",
        "2",
        "--dryrun",
    )
    assert done.returncode == 0, done.stderr
    assert "scatter over left, right: 2 slices" in done.stdout
    assert "pair[0]: $ /bin/sh -c 'touch ran-$1' p a 1" in done.stdout
    as_json = ninja(
        "run",
        "recipe.py:recipe",
        "--lefts",
        "a",
        "--lefts",
        "b",
        "--rights",
        "1",
        "--rights",
        "2",
        "--dryrun",
        "--json",
    )
    (planned,) = [s for s in json.loads(as_json.stdout)["steps"] if s["name"] == "pair"]
    assert planned["argv"] is None  # the whole lists are no command line; the slices are
    assert [s["argv"][-2:] for s in planned["slices"]] == [["a", "1"], ["b", "2"]]
    assert not list(tmp_path.glob("ran-*"))


def test_preflight_checks_literals_and_nested_recipes_too() -> None:
    from shinobi.plan import preflight

    recipe = Recipe("r", Pairs)
    recipe.add_step(
        "pair", pair, scatter=["left", "right"], left=recipe.inputs.lefts, right=[1, 2, 3]
    )
    with pytest.raises(
        ValueError, match=r"step 'pair': .*: left has 2 \(input 'lefts'\), right has 3$"
    ):
        preflight(build_graph(recipe), {"lefts": ["a", "b"], "rights": []})

    inner = Recipe("inner", Pairs)
    inner.add_step(
        "pair", pair, scatter=["left", "right"], left=inner.inputs.lefts, right=inner.inputs.rights
    )
    outer = Recipe("outer", Pairs)
    outer.add_step("branch", inner, lefts=outer.inputs.lefts, rights=[7])
    with pytest.raises(
        ValueError, match=r"step 'branch.pair': .*: left has 2 \(input 'lefts'\), right has 1"
    ):
        preflight(build_graph(outer), {"lefts": ["a", "b"], "rights": []})

    # The gathered output of a step scattered over known lists has a known length too.
    late = Recipe("late", Pairs)
    late.add_step("a", pair, scatter=["left"], left=late.inputs.lefts, right=0)
    late.add_step("b", pair, scatter=["left", "right"], left=late.outputs.a.joined, right=[1])
    with pytest.raises(
        ValueError, match=r"step 'b': .*: left has 2 \(output 'joined' of step 'a'\), right has 1$"
    ):
        preflight(build_graph(late), {"lefts": ["x", "y"], "rights": []})

    # A list a tool reports only when it runs is not known before: no verdict.
    unknown = Recipe("unknown", Pairs)
    unknown.add_step("up", count_all, items=["x"])
    unknown.add_step("b", pair, scatter=["left", "right"], left=unknown.outputs.up.count, right=[1])
    preflight(build_graph(unknown), {"lefts": [], "rights": []})


NESTED = """
from pydantic import BaseModel
import shinobi
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    word: str

class Out(BaseModel):
    said: str | None = None

echo = Cab("echo", ["/bin/echo"], In, Out, {"word": ParamMeta(positional=True)},
           wranglers=[shinobi.Wrangler(r"^(.*)$", "output", output="said")])
inner = Recipe("inner", In, Out)
inner.add_step("e", echo, word=inner.inputs.word)
inner.set_output("said", inner.outputs.e.said)

class Words(BaseModel):
    words: list[str]

class Saids(BaseModel):
    saids: list[str]

outer = Recipe("outer", Words, Saids, max_workers=2)
outer.add_step("branch", inner, scatter=["word"], word=outer.inputs.words)
outer.set_output("saids", outer.outputs.branch.said)
"""


def test_a_scattered_nested_recipe_runs_and_draws_once_per_slice(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    recipe_file(NESTED)
    done = ninja("run", "recipe.py:outer", "--words", "x", "--words", "y", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["outputs"] == {"saids": ["x", "y"]}
    dry = ninja("run", "recipe.py:outer", "--words", "x", "--words", "y", "--dryrun")
    assert "branch[0].e" in dry.stdout and "$ /bin/echo x" in dry.stdout
    assert "branch[1].e" in dry.stdout and "$ /bin/echo y" in dry.stdout


def test_the_dryrun_lists_pystep_slices_as_calls_and_shared_paths_once(tmp_path: Path) -> None:
    from shinobi.plan import plan_graph
    from shinobi.render.dryrun import dryrun_lines

    class Logged(BaseModel):
        stamp: str
        log: Path = Path("shared.log")

    logged = Cab(
        "logged",
        "/bin/echo",
        Logged,
        field_meta={"stamp": ParamMeta(positional=True), "log": ParamMeta(positional=True)},
    )

    @shinobi.pystep
    def shout(word: str) -> str:
        return word.upper()

    recipe = Recipe("fan", Stamps)
    recipe.add_step("echo", logged, scatter="stamp", stamp=recipe.inputs.stamps)
    recipe.add_step("shout", shout, scatter="word", word=recipe.inputs.stamps)
    plan = plan_graph(build_graph(recipe), {"stamps": ["a", "b"]}, str(tmp_path))
    text = "\n".join(dryrun_lines(plan, lambda s: "native", lambda s: s.argv))
    assert text.count(f"reads {tmp_path / 'shared.log'}") == 1
    assert "shout[0]: python: " in text and "shout(word='a')" in text
    assert "shout[1]: python: " in text and "shout(word='b')" in text


class FailIn(BaseModel):
    seconds: float = 0.3


fails = Cab(
    "fails",
    ["/bin/sh", "-c", 'sleep "$1"; exit 3', "fails"],
    FailIn,
    None,
    {"seconds": ParamMeta(positional=True)},
)


def test_a_scattered_step_the_run_stopped_midway_is_recorded_and_not_blamed(
    tmp_path: Path,
) -> None:
    """Another step fails while two of four slices run: those two finish, the
    others never start, and the step says so instead of missing from the result."""
    recipe = Recipe("r", Stamps, max_workers=3)
    recipe.add_step("first", fails)
    recipe.add_step("slices", stamp, scatter=["stamp"], stamp=recipe.inputs.stamps, seconds=1.0)
    stamps = [str(tmp_path / f"s{k}") for k in range(4)]
    result = run_recipe(recipe, {"stamps": stamps}, cwd=tmp_path, config=config(3))
    assert not result.ok and result.failed_step == "first"
    step = {s.name: s for s in result.steps}["slices"]
    assert step.status == "cancelled" and step.returncode is None
    assert step.error == "stopped after 2 of 4 slices, as the run did"
    # the two that ran are kept, as the manifest keeps them (they made their files)
    assert step.slices is not None
    assert [(p.name, p.status) for p in step.slices] == [("slices[0]", "ok"), ("slices[1]", "ok")]


SCATTERED_PYSTEP = """
import shinobi

@shinobi.pystep(scatter=["tag"])
def talk(tag: str, times: int = 2) -> str:
    return tag * times
"""


@pytest.mark.slow
def test_ninja_runs_a_scattered_pystep_alone_with_a_list_per_scattered_input(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    recipe_file(SCATTERED_PYSTEP)
    done = ninja("run", "recipe.py:talk", "--tag", "a", "--tag", "b", "--times", "3")
    assert done.returncode == 0, done.stderr
    assert "result = [aaa, bbb]" in done.stdout
    shown = ninja("run", "recipe.py:talk", "--help")
    assert "--tag TEXT" in shown.stdout and "--times INTEGER" in shown.stdout


def test_a_dry_run_shows_a_pystep_s_paths_as_text_not_as_path_objects(tmp_path: Path) -> None:
    from shinobi.plan import plan_graph
    from shinobi.render.dryrun import dryrun_lines

    @shinobi.pystep
    def summarise(image: Path, tables: list[Path]) -> str:
        return str(image)

    class Given(BaseModel):
        image: Path
        tables: list[Path]

    recipe = Recipe("sum", Given)
    recipe.add_step("sum", summarise, image=recipe.inputs.image, tables=recipe.inputs.tables)
    plan = plan_graph(build_graph(recipe), {"image": "a.fits", "tables": ["t0"]}, str(tmp_path))
    text = "\n".join(dryrun_lines(plan, lambda s: "native", lambda s: s.argv))
    assert "summarise(image='a.fits', tables=['t0'])" in text, text


def test_a_scattered_step_whose_every_slice_is_cached_is_cached(tmp_path: Path) -> None:
    class Stamps(BaseModel):
        stamps: list[str]

    class Stamp(BaseModel):
        stamp: str

    echo = Cab("echo", "/bin/echo", Stamp, field_meta={"stamp": ParamMeta(positional=True)})
    recipe = Recipe("fan", Stamps)
    recipe.add_step("echo", echo, scatter="stamp", stamp=recipe.inputs.stamps)
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    first = run_recipe(recipe, {"stamps": ["a", "b"]}, cwd=tmp_path, config=config)
    assert [s.status for s in first.steps] == ["ok"]
    again = run_recipe(recipe, {"stamps": ["a", "b"]}, cwd=tmp_path, config=config)
    (step,) = again.steps
    assert [s.status for s in step.slices or []] == ["cached", "cached"]
    assert step.status == "cached" and step.ok
    partly = run_recipe(recipe, {"stamps": ["a", "c"]}, cwd=tmp_path, config=config)
    assert [s.status for s in partly.steps] == ["ok"]  # one slice ran


def test_a_slice_that_failed_speaks_for_the_step_before_one_an_interrupt_cancelled() -> None:
    """Ctrl-C after slice 1 failed: slice 0 came first in order, cancelled, and the run's
    records said the step was cancelled, with no failed step (interrupts.md: named)."""
    from shinobi.scheduler import _gather
    from shinobi.steps.result import StepResult

    slices = [
        StepResult(name="s[0]", status="cancelled", error="interrupted"),
        StepResult(name="s[1]", status="failed", returncode=3, error="exited with code 3"),
        StepResult(name="s[2]", status="cancelled", error="interrupted"),
    ]
    gathered = _gather("s", slices)
    assert gathered.status == "failed" and gathered.returncode == 3
    assert gathered.error == "slice 's[1]': exited with code 3"


def test_a_scattered_steps_error_names_the_other_failed_slices_too() -> None:
    """h[0] exited 3 and h[1] was killed by the OOM killer: the run's last line named
    h[0] only, and the kill the user must act on was in the progress lines alone."""
    from shinobi.scheduler import _gather
    from shinobi.steps.result import StepResult

    oom = "killed by SIGKILL (usually the out-of-memory killer)"
    slices = [
        StepResult(name="h[0]", status="failed", returncode=3, error="exited with code 3"),
        StepResult(name="h[1]", status="failed", returncode=-9, signal=9, error=oom),
        StepResult(name="h[2]", status="ok"),
    ]
    assert _gather("h", slices).error == (f"slice 'h[0]': exited with code 3; slice 'h[1]': {oom}")
    many = [
        StepResult(name=f"m[{i}]", status="failed", error=f"exited with code {i}") for i in range(6)
    ]
    error = _gather("m", many).error or ""
    assert "slice 'm[2]': exited with code 2" in error and "m[3]" not in error
    assert error.endswith("; and 3 more failed slices")


class SecondsOut(BaseModel):
    said: list[float] = []


@pytest.mark.parametrize(
    ("wiring", "said"),
    [
        (
            {},
            "recipe 'r', step 'fan': input 'stamp' is required and nothing is wired to it"
            " (wire it in add_step, or give StampIn.stamp a default)",
        ),
        ({"stamp": 5}, "recipe 'r', step 'fan': input 'stamp': Input should be a valid string"),
    ],
)
def test_a_scatter_over_lists_only_the_run_knows_checks_the_rest_before_it(
    tmp_path: Path, wiring: dict[str, Any], said: str
) -> None:
    """The list comes from a step that has not run yet, so there are no slices to
    plan; what every slice would be refused for is refused before that step runs,
    as it is for a step that does not scatter."""
    upstream = Cab(
        "up",
        ["/bin/sh", "-c", "touch up-ran; echo v:1"],
        outputs_model=SecondsOut,
        wranglers=[shinobi.Wrangler(r"^v:(.*)$", "output", output="said")],
    )
    recipe = Recipe("r")
    recipe.add_step("up", upstream)
    recipe.add_step("fan", stamp, scatter=["seconds"], seconds=recipe.outputs.up.said, **wiring)
    with pytest.raises(UsageError) as info:
        run_recipe(recipe, cwd=tmp_path, config=config())
    assert str(info.value).startswith(said), info.value
    assert not (tmp_path / "up-ran").exists()
