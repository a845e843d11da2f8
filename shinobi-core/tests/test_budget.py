"""One budget per run: admission in declaration order, first come first served,
oversized steps alone, ``cpus="all"``, nested recipes sharing the parent's budget.

The scheduling tests read the start and end timestamps the steps themselves
record, and assert only on their order.
"""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import shinobi
from shinobi.config import load_config
from shinobi.graph import RecipeGraphError, build_graph
from shinobi.resources import Budget, Resources
from shinobi.runner import run_recipe
from shinobi.scheduler import run_graph
from shinobi.session import Session
from shinobi.steps import Cab, ParamMeta, Recipe, StepResult

GiB = 1024**3
#: Stamps its start and end; given a partner ($3), it first waits (up to 10 s) for the
#: partner to have started too, so two steps the scheduler runs together overlap however
#: slowly their processes start, and two it runs one after the other do not.
SCRIPT = (
    'date +%s.%N > "$1.start"; t=0;'
    ' while [ -n "$3" ] && [ ! -e "$3.start" ] && [ $t -lt 200 ]; do sleep 0.05; t=$((t+1)); done;'
    ' sleep "$2"; date +%s.%N > "$1.end"'
)


class TimedIn(BaseModel):
    stamp: str
    seconds: float = 0.2
    after: str | None = None
    meet: str | None = None  # a partner's stamp, waited for


class TimedOut(BaseModel):
    done: str | None = None


class NoIn(BaseModel):
    pass


timed = Cab(
    "timed",
    ["/bin/sh", "-c", SCRIPT, "timed"],
    TimedIn,
    TimedOut,
    {
        "stamp": ParamMeta(positional=True),
        "seconds": ParamMeta(positional=True),
        "after": ParamMeta(skip=True),
        "meet": ParamMeta(positional=True),
    },
)


class Recorder:
    """A run observer that keeps the warnings."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def step_started(self, name: str, info: dict[str, Any]) -> None:
        pass

    def step_finished(self, result: StepResult) -> None:
        pass

    def warning(self, message: str) -> None:
        self.warnings.append(message)


def run(
    recipe: Recipe, tmp_path: Path, cpus: float = 3, memory: str = "8GiB", workers: int = 4
) -> tuple[Any, Recorder]:
    config = load_config(
        {
            "execution.cpus": cpus,
            "execution.memory": memory,
            "execution.max_workers": workers,
        }
    )
    recorder = Recorder()
    session = Session(config=config, cwd=str(tmp_path), observers=[recorder])
    result = run_graph(build_graph(recipe), {}, session)
    assert result.ok, result.error
    return result, recorder


def span(tmp_path: Path, name: str) -> tuple[float, float]:
    return (
        float((tmp_path / f"{name}.start").read_text()),
        float((tmp_path / f"{name}.end").read_text()),
    )


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def add(
    recipe: Recipe,
    tmp_path: Path,
    name: str,
    seconds: float = 0.2,
    meet: str | None = None,
    **extra: Any,
) -> None:
    partner = str(tmp_path / meet) if meet is not None else None
    recipe.add_step(name, timed, stamp=str(tmp_path / name), seconds=seconds, meet=partner, **extra)


# -- the budget on its own -------------------------------------------------------


def _wake() -> None:
    pass


def test_the_head_of_the_queue_is_never_overtaken_by_a_smaller_step() -> None:
    budget = Budget(4, GiB)
    first = budget.request("first", Resources(cpus=3), _wake)
    big = budget.request("big", Resources(cpus=2), _wake)
    small = budget.request("small", Resources(cpus=1), _wake)
    assert first and big and small
    assert first.granted and not big.granted
    assert not small.granted  # it would fit, but it is behind big
    budget.release(first)
    assert big.granted and small.granted


def test_memory_is_admitted_the_same_way() -> None:
    budget = Budget(8, 4 * GiB)
    a = budget.request("a", Resources(memory="3GiB"), _wake)
    b = budget.request("b", Resources(memory="2GiB"), _wake)
    assert a and b and a.granted and not b.granted
    budget.release(a)
    assert b.granted and budget.free_memory == 2 * GiB


def test_an_oversized_step_waits_for_the_budget_to_empty_then_runs_alone() -> None:
    budget = Budget(2, GiB)
    running = budget.request("running", Resources(cpus=1), _wake)
    huge = budget.request("huge", Resources(cpus=8), _wake)
    later = budget.request("later", Resources(cpus=1), _wake)
    assert running and huge and later
    assert huge.oversized and not huge.granted and not later.granted
    budget.release(running)
    assert huge.granted and not later.granted
    budget.release(huge)
    assert later.granted


def test_an_oversized_memory_step_also_holds_back_cpu_only_steps() -> None:
    budget = Budget(4, GiB)
    huge = budget.request("huge", Resources(memory="2GiB"), _wake)
    cpu_only = budget.request("cpu_only", Resources(cpus=1), _wake)
    assert huge and cpu_only and huge.granted and not cpu_only.granted
    budget.release(huge)
    assert cpu_only.granted


def test_all_is_resolved_against_the_pool_when_admitted() -> None:
    budget = Budget(3, GiB)
    one = budget.request("one", Resources(cpus=1), _wake)
    everything = budget.request("everything", Resources(cpus="all"), _wake)
    tiny = budget.request("tiny", Resources(cpus=0.5), _wake)
    assert one and everything and tiny
    assert not everything.granted and not everything.oversized
    budget.release(one)
    assert everything.granted and everything.cpus == 3.0 and not tiny.granted
    budget.release(everything)
    assert tiny.granted


def test_undeclared_is_free_and_a_cancelled_waiter_leaves_the_queue() -> None:
    budget = Budget(1, GiB)
    assert budget.request("free", None, _wake) is None
    assert budget.request("free", Resources(), _wake) is None
    holder = budget.request("holder", Resources(cpus=1), _wake)
    gone = budget.request("gone", Resources(cpus=1), _wake)
    after = budget.request("after", Resources(cpus=1), _wake)
    assert holder and gone and after and budget.waiting == 2
    budget.release(gone)  # e.g. its recipe failed before it ran
    budget.release(holder)
    assert after.granted and not gone.granted and budget.waiting == 0


def test_waiters_are_woken_when_granted() -> None:
    budget = Budget(1, GiB)
    woken = threading.Event()
    holder = budget.request("holder", Resources(cpus=1), _wake)
    waiter = budget.request("waiter", Resources(cpus=1), woken.set)
    assert waiter and not woken.is_set()
    budget.release(holder)
    assert woken.is_set() and waiter.granted


# -- the scheduler admitting against it ------------------------------------------


def test_two_steps_of_two_cpus_on_three_never_overlap(tmp_path: Path) -> None:
    recipe = Recipe("r", NoIn, max_workers=4)
    add(recipe, tmp_path, "a", meet="free", resources=Resources(cpus=2))
    add(recipe, tmp_path, "b", resources=Resources(cpus=2))
    add(recipe, tmp_path, "free", seconds=0.4, meet="a")  # undeclared: slots only
    run(recipe, tmp_path, cpus=3)
    a, b, free = (span(tmp_path, n) for n in ("a", "b", "free"))
    assert not overlap(a, b)
    assert a[1] <= b[0]  # in declaration order
    assert overlap(free, a)  # undeclared: it did not queue behind b


def test_steps_a_backend_runs_elsewhere_take_no_share_of_this_machine(tmp_path: Path) -> None:
    """A cluster admits its jobs itself: holding them back for this machine's cores
    would run them one after another."""
    from dataclasses import replace

    from shinobi.backends.native import NativeBackend

    class Faraway(NativeBackend):
        name = "faraway"
        capabilities = replace(NativeBackend.capabilities, remote=True)

    recipe = Recipe("r", NoIn, max_workers=4)
    for name, other in (("a", "b"), ("b", "a")):
        add(
            recipe,
            tmp_path,
            name,
            seconds=0.5,
            meet=other,
            resources=Resources(cpus=2),
            backend="faraway",
        )
    config = load_config({"execution.cpus": 3, "execution.max_workers": 4})
    session = Session(config=config, cwd=str(tmp_path))
    session._backends["faraway"] = Faraway()
    result = run_graph(build_graph(recipe), {}, session)
    assert result.ok, result.error
    assert overlap(span(tmp_path, "a"), span(tmp_path, "b"))

    # a pystep runs here whatever its backend: it still waits for this machine
    @shinobi.pystep(resources=Resources(cpus=2))
    def think(stamp: str) -> str:
        Path(f"{stamp}.start").write_text(str(time.time()))
        time.sleep(0.3)
        Path(f"{stamp}.end").write_text(str(time.time()))
        return stamp

    here = Recipe("r", NoIn, max_workers=4)
    for name in ("c", "d"):
        here.add_step(name, think, stamp=str(tmp_path / name), backend="faraway")
    assert run_graph(build_graph(here), {}, session).ok
    assert not overlap(span(tmp_path, "c"), span(tmp_path, "d"))


def test_two_steps_that_fit_together_do_overlap(tmp_path: Path) -> None:
    recipe = Recipe("r", NoIn, max_workers=4)
    add(recipe, tmp_path, "a", meet="b", resources=Resources(cpus=1, memory="1GiB"))
    add(recipe, tmp_path, "b", meet="a", resources=Resources(cpus=2, memory="1GiB"))
    run(recipe, tmp_path, cpus=3)
    assert overlap(span(tmp_path, "a"), span(tmp_path, "b"))


def test_an_oversized_step_runs_alone_with_a_warning(tmp_path: Path) -> None:
    recipe = Recipe("r", NoIn, max_workers=4)
    add(recipe, tmp_path, "before", resources=Resources(cpus=1))
    add(recipe, tmp_path, "huge", resources=Resources(cpus=64, memory="1TiB"))
    add(recipe, tmp_path, "behind", resources=Resources(cpus=1))
    _, recorder = run(recipe, tmp_path, cpus=2)
    before, huge, behind = (span(tmp_path, n) for n in ("before", "huge", "behind"))
    assert before[1] <= huge[0] and huge[1] <= behind[0]
    assert len(recorder.warnings) == 1
    warning = recorder.warnings[0]
    assert "'huge'" in warning and "cpus=64" in warning and "runs alone" in warning


def test_cpus_all_excludes_its_siblings(tmp_path: Path) -> None:
    recipe = Recipe("r", NoIn, max_workers=4)
    add(recipe, tmp_path, "one", resources=Resources(cpus=1))
    add(recipe, tmp_path, "all", resources=Resources(cpus="all"))
    add(recipe, tmp_path, "two", resources=Resources(cpus=1))
    _, recorder = run(recipe, tmp_path, cpus=2)
    one, every, two = (span(tmp_path, n) for n in ("one", "all", "two"))
    assert not overlap(every, one) and not overlap(every, two)
    assert recorder.warnings == []


def test_a_big_step_is_not_starved_by_a_stream_of_small_ones(tmp_path: Path) -> None:
    recipe = Recipe("r", NoIn, max_workers=4)
    add(recipe, tmp_path, "small0", seconds=0.5, resources=Resources(cpus=1))
    add(recipe, tmp_path, "big", resources=Resources(cpus=3))
    for k in range(1, 4):
        add(recipe, tmp_path, f"small{k}", seconds=0.1, resources=Resources(cpus=1))
    run(recipe, tmp_path, cpus=3)
    big = span(tmp_path, "big")
    for k in range(1, 4):
        assert big[1] <= span(tmp_path, f"small{k}")[0]


def test_nested_parallel_branches_share_one_budget(tmp_path: Path) -> None:
    branches = []
    for b in range(2):
        branch = Recipe(f"branch{b}", NoIn, max_workers=4)
        for s in range(2):
            add(branch, tmp_path, f"b{b}s{s}", resources=Resources(cpus=2))
        branches.append(branch)
    parent = Recipe("parent", NoIn, max_workers=4)
    for b, branch in enumerate(branches):
        parent.add_step(f"branch{b}", branch)
    run(parent, tmp_path, cpus=3)
    spans = [span(tmp_path, f"b{b}s{s}") for b in range(2) for s in range(2)]
    for x, y in itertools.combinations(spans, 2):
        assert not overlap(x, y)


def test_sibling_recipes_are_served_first_come(tmp_path: Path) -> None:
    # Each branch asks for the whole budget twice; with one budget served in
    # arrival order the four steps run one at a time and every one runs.
    parent = Recipe("parent", NoIn, max_workers=3)
    for b in range(3):
        branch = Recipe(f"branch{b}", NoIn, max_workers=2)
        for s in range(2):
            add(branch, tmp_path, f"b{b}s{s}", seconds=0.1, resources=Resources(cpus="all"))
        parent.add_step(f"branch{b}", branch)
    result, _ = run(parent, tmp_path, cpus=2)
    spans = sorted(span(tmp_path, f"b{b}s{s}") for b in range(3) for s in range(2))
    for x, y in itertools.pairwise(spans):
        assert x[1] <= y[0]
    assert [s.name for s in result.steps] == ["branch0", "branch1", "branch2"]


def test_a_late_ready_earlier_step_does_not_deadlock_a_granted_one(tmp_path: Path) -> None:
    """A step granted while an earlier-declared one became ready must still launch."""
    recipe = Recipe("r", NoIn, max_workers=4)
    add(recipe, tmp_path, "x", seconds=0.3, resources=Resources(cpus=2))
    recipe.add_step(
        "early",
        timed,
        stamp=str(tmp_path / "early"),
        seconds=0.1,
        after=recipe.outputs.x.done,
        resources=Resources(cpus=2),
    )
    add(recipe, tmp_path, "late", seconds=0.1, resources=Resources(cpus=2))
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(run(recipe, tmp_path)), daemon=True)
    thread.start()
    thread.join(60)
    assert outcome, "the run deadlocked"
    assert not overlap(span(tmp_path, "early"), span(tmp_path, "late"))


# -- where resources may be declared ----------------------------------------------


def test_resources_reach_the_node_from_every_place_they_can_be_declared() -> None:
    footprint = Resources(cpus=2, memory="1GiB")
    on_cab = Cab("on_cab", "true", TimedIn, resources=footprint)

    @shinobi.step(timed, resources=footprint)
    def driven(ctx: Any) -> Any:
        return ctx.run()

    @shinobi.pystep(resources=footprint)
    def python_step(x: int = 1) -> None:
        return None

    recipe = Recipe("r", NoIn)
    recipe.add_step("by_add_step", timed, stamp="s", resources=footprint)
    recipe.add_step("by_cab", on_cab, stamp="s")
    recipe.add_step("by_step_decorator", driven, stamp="s")
    recipe.add_step("by_pystep", python_step)

    @recipe.step(timed, stamp="s", resources=footprint)
    def by_recipe_step(ctx: Any) -> Any:
        return ctx.run()

    graph = build_graph(recipe)
    assert [n.resources for n in graph.nodes] == [footprint] * 5


def test_a_function_driving_a_cab_with_resources_declares_the_cab_s_own() -> None:
    """Every ctx.run() runs the cab: what it needs is what the step needs."""
    footprint = Resources(cpus="all")
    big = Cab("big", "true", TimedIn, resources=footprint)

    @shinobi.step(big)
    def decorated(ctx: Any) -> Any:
        return ctx.run()

    recipe = Recipe("r", NoIn)
    recipe.add_step("by_step_decorator", decorated, stamp="s")

    @recipe.step(big, stamp="s")
    def by_recipe_step(ctx: Any) -> Any:
        return ctx.run()

    recipe.add_step("own_wins", decorated, stamp="s", resources=Resources(cpus=1))
    graph = build_graph(recipe)
    assert [n.resources for n in graph.nodes] == [footprint, footprint, Resources(cpus=1)]


def test_add_step_resources_win_over_the_cab_s_own() -> None:
    recipe = Recipe("r", NoIn)
    cab = Cab("c", "true", TimedIn, resources=Resources(cpus=8))
    recipe.add_step("s", cab, stamp="x", resources=Resources(cpus=1))
    assert build_graph(recipe).nodes[0].resources == Resources(cpus=1)


def test_resources_on_a_nested_recipe_are_rejected() -> None:
    inner = Recipe("inner", NoIn)
    inner.add_step("work", timed, stamp="x")
    outer = Recipe("outer", NoIn)
    outer.add_step("branch", inner, resources=Resources(cpus=4))
    with pytest.raises(
        RecipeGraphError, match=r"step 'branch': resources are declared on a nested recipe"
    ):
        build_graph(outer)


def test_a_budget_can_be_made_by_hand() -> None:
    budget = Budget(3)  # memory: what this process may use
    assert budget.cpus == 3.0 and budget.memory > 0
    sized = Budget(2, "8GiB")
    ticket = sized.request("x", Resources(cpus=1, memory="1GiB"))  # no wake-up needed
    assert ticket is not None and ticket.granted
    assert (sized.free_cpus, sized.free_memory) == (1.0, 7 * GiB)


def test_at_one_worker_order_holds_even_while_a_sibling_holds_the_budget(tmp_path: Path) -> None:
    """busy's hog holds the whole budget; ordered (one worker) starts only once hog
    is running, and must still run its declared step before its undeclared one."""

    class After(BaseModel):
        after: str | None = None

    wait_for_hog = Cab(
        "wait",
        ["/bin/sh", "-c", f'while [ ! -f "{tmp_path}/hog.start" ]; do sleep 0.01; done; echo x'],
        outputs_model=TimedOut,
        wranglers=[shinobi.Wrangler(r"^(x)$", "output", output="done")],
    )
    busy = Recipe("busy", NoIn)
    add(busy, tmp_path, "hog", seconds=0.5, resources=Resources(cpus="all"))
    ordered = Recipe("ordered", After, max_workers=1)
    add(
        ordered,
        tmp_path,
        "declared",
        seconds=0.1,
        resources=Resources(cpus=1),
        after=ordered.inputs.after,
    )
    add(ordered, tmp_path, "undeclared", seconds=0.1, after=ordered.inputs.after)
    parent = Recipe("parent", NoIn, max_workers=3)
    parent.add_step("busy", busy)
    parent.add_step("wait", wait_for_hog)
    parent.add_step("ordered", ordered, after=parent.outputs.wait.done)
    run(parent, tmp_path, cpus=2)
    hog, declared, undeclared = (span(tmp_path, n) for n in ("hog", "declared", "undeclared"))
    assert hog[1] <= declared[0] and declared[1] <= undeclared[0]


def test_run_recipe_callers_see_the_oversized_warning_in_the_result(tmp_path: Path) -> None:
    """No observer: the warning still reaches the caller, in ``RecipeResult.warnings``."""
    recipe = Recipe("huge", NoIn, max_workers=2)
    recipe.add_step("huge", timed, stamp="huge", seconds=0.0, resources=Resources(cpus=64))
    config = load_config({"execution.cpus": 2, "cache.enabled": False})
    result = run_recipe(recipe, config=config, cwd=tmp_path)
    assert result.ok, result.error
    assert any("more than this run's whole budget" in w for w in result.warnings)


def test_a_step_served_from_the_cache_is_not_warned_about_as_oversized(tmp_path: Path) -> None:
    """It never runs, so it does not run alone: the warning was said of it anyway."""
    recipe = Recipe("huge", NoIn, max_workers=2)
    recipe.add_step("huge", timed, stamp="huge", seconds=0.0, resources=Resources(cpus=64))
    config = load_config({"execution.cpus": 2, "cache.dir": str(tmp_path / "cache")})
    first = run_recipe(recipe, config=config, cwd=tmp_path)
    assert any("step 'huge' declares" in w and "runs alone" in w for w in first.warnings)
    again = run_recipe(recipe, config=config, cwd=tmp_path)
    assert again.ok and [s.status for s in again.steps] == ["cached"], again.error
    assert not any("whole budget" in w for w in again.warnings), again.warnings


HUNG = """
from pydantic import BaseModel
from shinobi.resources import Resources
from shinobi.steps import Cab, ParamMeta, Recipe

class SleepIn(BaseModel):
    secs: float
    after: str | None = None

class Done(BaseModel):
    done: str | None = None

sleep = Cab("sleep", ["sleep"], SleepIn, Done,
            {"secs": ParamMeta(positional=True), "after": ParamMeta(skip=True)})
big = Resources(memory="600MiB")

class BranchIn(BaseModel):
    name: str

branch = Recipe("branch", BranchIn)
branch.add_step("x1", sleep, secs=1.0, resources=big)
branch.add_step("x2", sleep, secs=0.2, resources=big)

class TopIn(BaseModel):
    names: list[str] = ["b0", "b1", "b2"]

top = Recipe("top", TopIn, max_workers=2)
top.add_step("prep", sleep, secs=0.3)
top.add_step("solo", sleep, secs=0.2, after=top.outputs.prep.done, resources=big)
top.add_step("branches", branch, scatter=["name"], name=top.inputs.names)
"""


def test_nested_recipes_do_not_take_the_workers_a_granted_step_needs(
    ninja: Any, tmp_path: Path
) -> None:
    """``solo`` queued at the budget behind a branch's step; the other branches, which
    declare nothing themselves, took both workers and queued behind ``solo``; the
    budget then went to ``solo``, which had no worker to start on: nothing ran, for
    ever."""
    (tmp_path / "hung.py").write_text(HUNG)
    env = {"SHINOBI_CACHE_ENABLED": "0", "SHINOBI_EXECUTION_MEMORY": "1GiB"}
    done = ninja("run", "hung.py:top", env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "done      solo" in done.stderr and done.stderr.count("x2") >= 3
