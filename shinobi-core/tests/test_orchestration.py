"""Orchestration functions: ``fn(ctx)`` decides how often the cab runs; the graph
(and so the dry run) stays what the wiring declares."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from test_venv_fixtures import made_venv

import shinobi
from shinobi.config import load_config
from shinobi.errors import UsageError
from shinobi.graph import build_graph
from shinobi.resources import Resources
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe, StepContext, StepResult

__all__ = ["made_venv"]

Ninja = Callable[..., subprocess.CompletedProcess[str]]


class FlakyIn(BaseModel):
    counter: str
    succeed_at: int = 2
    word: str = "hello"


class FlakyOut(BaseModel):
    said: str | None = None


# Counts its attempts in a file and fails until the succeed_at-th one.
flaky = Cab(
    "flaky",
    [
        "/bin/sh",
        "-c",
        'n=$(cat "$1" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$1";'
        ' echo "attempt $n: $3 venv=${VIRTUAL_ENV:-none}"; [ "$n" -ge "$2" ]',
        "flaky",
    ],
    FlakyIn,
    FlakyOut,
    {k: ParamMeta(positional=True) for k in ("counter", "succeed_at", "word")},
    wranglers=[shinobi.Wrangler(r"^attempt \d+: (.*)$", "output", output="said")],
)


class In(BaseModel):
    counter: str


class Out(BaseModel):
    said: str | None = None


@pytest.fixture(autouse=True)
def _no_outer_venv(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool reports $VIRTUAL_ENV; ninja's own (if activated) must not leak in."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)


def config() -> Any:
    return load_config({"cache.enabled": False})


def attempts(path: Path) -> int:
    return int(path.read_text())


def test_ctx_run_may_be_called_again_to_retry(tmp_path: Path) -> None:
    seen: list[StepResult] = []

    @shinobi.step(flaky)
    def retry(ctx: StepContext) -> StepResult:
        result = ctx.run()
        seen.append(result)
        if not result.ok:
            result = ctx.run()
            seen.append(result)
        return result

    recipe = Recipe("r", In, Out)
    recipe.add_step("retry", retry, counter=recipe.inputs.counter)
    recipe.set_output("said", recipe.outputs.retry.said)
    counter = tmp_path / "count"
    result = run_recipe(recipe, {"counter": str(counter)}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert attempts(counter) == 2
    assert [s.status for s in seen] == ["failed", "ok"]
    assert seen[0].returncode == 1 and isinstance(seen[1], StepResult)
    assert result.outputs == {"said": "hello venv=none"}


def test_the_function_is_said_started_before_its_own_python_runs(tmp_path: Path) -> None:
    """A function's Python before its first ctx.run() may take a while: the run shows
    the step running from its start, not from the first tool's."""
    events: list[tuple[str, ...]] = []

    class Watch:
        def step_started(self, name: str, info: dict[str, Any]) -> None:
            events.append(("started", name, str(info.get("backend"))))

        def step_finished(self, result: StepResult) -> None:
            events.append(("finished", result.name, result.status))

        def warning(self, message: str) -> None:
            pass

    @shinobi.step(flaky)
    def prepare_then_run(ctx: StepContext) -> StepResult:
        events.append(("python", ctx.name))
        time.sleep(0.3)  # its own work, before any tool
        return ctx.run(succeed_at=1)

    recipe = Recipe("r", In, Out)
    recipe.add_step("prep", prepare_then_run, counter=recipe.inputs.counter)
    counter = str(tmp_path / "count")
    result = run_recipe(
        recipe, {"counter": counter}, cwd=tmp_path, config=config(), observers=[Watch()]
    )
    assert result.ok, result.error
    assert events == [
        ("started", "prep", "function"),
        ("python", "prep"),
        ("started", "prep", "native"),
        ("finished", "prep", "ok"),
    ]
    (step,) = result.steps  # it took the function's time, not only its tool's
    assert step.started is not None and step.finished is not None
    assert step.finished - step.started >= 0.3


def test_the_function_can_post_process_and_override_inputs(tmp_path: Path) -> None:
    @shinobi.step(flaky)
    def shout(ctx: StepContext) -> StepResult:
        assert ctx.inputs["word"] == "hello"
        result = ctx.run(succeed_at=1, word="quiet")
        result.outputs["said"] = str(result.outputs["said"]).upper()
        return result

    recipe = Recipe("r", In, Out)
    recipe.add_step("shout", shout, counter=recipe.inputs.counter)
    recipe.set_output("said", recipe.outputs.shout.said)
    result = run_recipe(recipe, {"counter": str(tmp_path / "c")}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs == {"said": "QUIET VENV=NONE"}


def test_a_function_that_does_not_call_run_gets_one_run(tmp_path: Path) -> None:
    calls: list[str] = []

    @shinobi.step(flaky)
    def lazy(ctx: StepContext) -> None:
        calls.append(ctx.name)

    recipe = Recipe("r", In, Out)
    recipe.add_step("lazy", lazy, counter=recipe.inputs.counter, succeed_at=1)
    counter = tmp_path / "c"
    result = run_recipe(recipe, {"counter": str(counter)}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert calls == ["lazy"] and attempts(counter) == 1


def test_the_last_run_is_the_result_when_the_function_returns_something_else(
    tmp_path: Path,
) -> None:
    @shinobi.step(flaky)
    def thrice(ctx: StepContext) -> str:
        for _ in range(3):
            ctx.run(succeed_at=3)
        return "done"

    counter = tmp_path / "c"
    result = run_recipe(thrice, {"counter": str(counter)}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert attempts(counter) == 3


class Abort(BaseException):
    """Neither an Exception nor an exit: how libraries unwind (pytest's Failed, trio's Cancelled)."""


@pytest.mark.parametrize(
    "raised",
    [
        RuntimeError("no luck"),
        KeyboardInterrupt("no luck"),
        Abort("no luck"),
        GeneratorExit("no luck"),
    ],
)
def test_a_raising_function_fails_its_step_by_name(tmp_path: Path, raised: BaseException) -> None:
    @shinobi.step(flaky)
    def broken(ctx: StepContext) -> None:
        raise raised

    result = run_recipe(broken, {"counter": str(tmp_path / "c")}, cwd=tmp_path, config=config())
    assert not result.ok
    said = type(raised).__name__
    assert result.error == (
        f"the orchestration function raised {said}: no luck (traceback in the step's stderr)"
    )
    assert not (tmp_path / "c").exists()
    (log,) = tmp_path.rglob("logs/broken.err")
    trace = log.read_text()
    assert "in broken\n    raise raised" in trace and f"{said}: no luck" in trace
    assert "shinobi/dispatch.py" not in trace  # ninja's own frames say nothing of the bug


def test_a_bad_override_is_reported_with_the_field(tmp_path: Path) -> None:
    @shinobi.step(flaky)
    def wrong(ctx: StepContext) -> StepResult:
        return ctx.run(succeed_at="soon")

    result = run_recipe(wrong, {"counter": str(tmp_path / "c")}, cwd=tmp_path, config=config())
    assert not result.ok
    assert "step 'wrong': input 'succeed_at'" in (result.error or "")


def test_an_override_the_cab_does_not_have_fails_the_step_with_a_suggestion(
    tmp_path: Path,
) -> None:
    @shinobi.step(flaky)
    def misspelt(ctx: StepContext) -> StepResult:
        return ctx.run(succeed_at_=2)

    result = run_recipe(misspelt, {"counter": str(tmp_path / "c")}, cwd=tmp_path, config=config())
    assert not result.ok
    assert "'flaky' has no input 'succeed_at_'; did you mean 'succeed_at'?" in (result.error or "")
    assert not (tmp_path / "c").exists()  # the tool never ran with its defaults
    # ninja's refusal of what the code asked, in one line: no traceback through ninja
    assert "Traceback" not in result.steps[0].stderr


def test_an_override_its_model_refuses_is_one_line_and_still_a_value_error(
    tmp_path: Path,
) -> None:
    caught: list[str] = []

    @shinobi.step(flaky)
    def wrong(ctx: StepContext) -> StepResult:
        try:
            ctx.run(succeed_at="soon")
        except ValueError as exc:  # what code written for the old ValueError catches
            caught.append(str(exc))
        return ctx.run(succeed_at="later")

    result = run_recipe(wrong, {"counter": str(tmp_path / "c")}, cwd=tmp_path, config=config())
    assert not result.ok
    assert caught and "step 'wrong': input 'succeed_at'" in caught[0]
    assert "Traceback" not in result.steps[0].stderr


def test_backend_on_the_decorator_and_on_ctx_run(made_venv: Path, tmp_path: Path) -> None:
    runs: list[StepResult] = []

    @shinobi.step(flaky, backend="venv", resources=Resources(cpus=1))
    def both(ctx: StepContext) -> StepResult:
        runs.append(ctx.run(succeed_at=1))  # the decorator's backend: venv
        runs.append(ctx.run(succeed_at=1, backend="native"))  # ctx.run's wins
        return runs[-1]

    cfg = load_config({"cache.enabled": False, "backend.venv": str(made_venv)})
    result = run_recipe(both, {"counter": str(tmp_path / "c")}, cwd=tmp_path, config=cfg)
    assert result.ok, result.error
    assert [r.backend for r in runs] == ["venv", "native"]
    assert runs[0].outputs["said"] == f"hello venv={made_venv}"
    assert runs[1].outputs["said"] == "hello venv=none"
    assert build_graph(both_recipe(both)).nodes[0].resources == Resources(cpus=1)


def both_recipe(step: Any) -> Recipe:
    recipe = Recipe("r", In)
    recipe.add_step("both", step, counter=recipe.inputs.counter)
    return recipe


def test_recipe_step_adds_the_function_as_a_step(tmp_path: Path) -> None:
    recipe = Recipe("r", In, Out)

    @recipe.step(flaky, counter=recipe.inputs.counter, succeed_at=1)
    def first(ctx: StepContext) -> StepResult:
        return ctx.run()

    @recipe.step(
        flaky, name="second", counter=recipe.inputs.counter, word=recipe.outputs.first.said
    )
    def again(ctx: StepContext) -> StepResult:
        return ctx.run(succeed_at=2)

    recipe.set_output("said", recipe.outputs.second.said)
    graph = build_graph(recipe)
    assert [(n.name, n.deps) for n in graph.nodes] == [("first", ()), ("second", (0,))]
    result = run_recipe(recipe, {"counter": str(tmp_path / "c")}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs == {"said": "hello venv=none venv=none"}


RECIPE = """
from pydantic import BaseModel
import shinobi
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    out: str = "made.txt"

touch = Cab("touch", ["/bin/touch"], In, field_meta={"out": ParamMeta(positional=True)})
recipe = Recipe("r", In)

@recipe.step(touch, out=recipe.inputs.out)
def make(ctx):
    for _ in range(5):
        ctx.run()
"""


def test_the_dryrun_shows_one_declared_node_and_runs_nothing(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    recipe_file(RECIPE)
    done = ninja("run", "recipe.py:recipe", "--dryrun", "--json")
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)["steps"]
    assert [(s["name"], s["kind"], s["argv"]) for s in steps] == [
        ("make", "function", ["/bin/touch", "made.txt"])
    ]
    text = ninja("run", "recipe.py:recipe", "--dryrun")
    assert "driven by an orchestration function" in text.stdout
    assert not (tmp_path / "made.txt").exists()
    ran = ninja("run", "recipe.py:recipe")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "made.txt").exists()


class CountOut(BaseModel):
    said: int | None = None


class CountIn(BaseModel):
    verdict: str
    n: int


counted = Cab(
    "counted",
    ["/bin/sh", "-c", 'echo "attempt $2"; [ "$1" = ok ]', "counted"],
    CountIn,
    CountOut,
    {"verdict": ParamMeta(positional=True), "n": ParamMeta(positional=True)},
)


def test_a_result_the_function_builds_is_the_step_s_and_is_validated(tmp_path: Path) -> None:
    @shinobi.step(counted)
    def made_up(ctx: StepContext) -> StepResult:
        ctx.run(verdict="bad", n=1)
        return StepResult(name="x", status="ok", outputs={"said": "not a number"})

    @shinobi.step(counted)
    def fine(ctx: StepContext) -> StepResult:
        return StepResult(name="x", status="ok", outputs={"said": "7"})

    recipe = Recipe("r")
    recipe.add_step("o", made_up, verdict="ok", n=0)
    result = run_recipe(recipe, cwd=tmp_path, config=config())
    (step,) = result.steps
    assert step.name == "o" and step.status == "failed"
    assert step.error is not None and "output 'said'" in step.error
    recipe = Recipe("r")
    recipe.add_step("o", fine, verdict="ok", n=0)
    result = run_recipe(recipe, cwd=tmp_path, config=config())
    assert result.ok and result.steps[0].name == "o" and result.steps[0].outputs == {"said": 7}


class MadeOut(BaseModel):
    image: shinobi.steps.File


made_image = Cab("made_image", ["true"], CountIn, MadeOut)


@pytest.mark.parametrize(
    ("made", "said"),
    [
        (
            StepResult(name="x", status="weird"),
            "status 'weird', which is none of ok, cached, failed",
        ),  # type: ignore[arg-type]
        (StepResult(name="x", status="failed"), "returned a failed result without an error"),
        (
            StepResult(name="x", status="ok", outputs={"image": "never-made.fits"}),
            "output 'image' names 'never-made.fits', which does not exist",
        ),
        (  # skipped without the required output: the recipe's outputs model was blamed
            StepResult(name="x", status="skipped"),
            "returned a result whose output 'image': Field required",
        ),
    ],
)
def test_a_result_the_function_builds_is_held_to_what_a_run_s_would_be(
    tmp_path: Path, made: StepResult, said: str
) -> None:
    @shinobi.step(made_image)
    def hand_made(ctx: StepContext) -> StepResult:
        return made

    recipe = Recipe("r")
    recipe.add_step("o", hand_made, verdict="ok", n=0)
    result = run_recipe(recipe, cwd=tmp_path, config=config())
    (step,) = result.steps
    assert not result.ok and step.status == "failed"
    assert step.error is not None and said in step.error, step.error


def test_a_function_that_cannot_take_ctx_is_refused_where_it_is_declared() -> None:
    def no_ctx() -> None:
        return None

    def two(ctx: StepContext, extra: int) -> None:
        return None

    for fn in (no_ctx, two):
        with pytest.raises(TypeError, match=r"must take one argument, the step's context"):
            shinobi.step(counted)(fn)
    recipe = Recipe("r")
    with pytest.raises(TypeError, match=r"no_ctx' must take one argument"):
        recipe.step(counted, verdict="ok", n=0)(no_ctx)

    def defaults(ctx: StepContext, extra: int = 1, *more: Any, **kw: Any) -> None:
        return None

    shinobi.step(counted)(defaults)  # callable as fn(ctx): fine


@pytest.mark.parametrize("kind", ["generator", "async"])
def test_a_function_whose_call_would_not_run_its_body_is_refused(kind: str) -> None:
    def generator(ctx: StepContext) -> Any:
        yield ctx.run()

    async def coroutine(ctx: StepContext) -> Any:
        return ctx.run()

    with pytest.raises(TypeError, match="would not run its body"):
        shinobi.step(counted)(generator if kind == "generator" else coroutine)


def test_each_ctx_run_adds_to_the_step_s_log(tmp_path: Path) -> None:
    """A retry keeps the failed attempt's output, which is what it is there for."""

    @shinobi.step(counted)
    def retry(ctx: StepContext) -> StepResult:
        ctx.run(verdict="bad", n=1)
        return ctx.run(verdict="ok", n=2)

    result = run_recipe(retry, {"verdict": "ok", "n": 0}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    (log,) = (tmp_path / ".shinobi" / "runs").glob("*/logs/retry.out")
    assert log.read_text().splitlines() == ["attempt 1", "attempt 2"]


def test_outputs_a_recipe_cannot_hold_fail_it_in_one_line_and_are_not_reported(
    tmp_path: Path,
) -> None:
    class Promised(BaseModel):
        said: int

    @shinobi.step(counted)
    def says_hello(ctx: StepContext) -> StepResult:  # what the output is, known only as it runs
        return StepResult(name="x", status="ok", outputs={"said": None})

    recipe = Recipe("r", None, Promised)
    recipe.add_step("s", says_hello, verdict="ok", n=0)
    recipe.set_output("said", recipe.outputs.s.said)
    result = run_recipe(recipe, cwd=tmp_path, config=config())
    assert not result.ok and result.outputs == {} and result.failed_step is None
    assert result.error is not None and "\n" not in result.error
    assert result.error.startswith("recipe 'r': its output 'said' is None")
    known = Recipe("r", None, Promised)  # a literal: refused before any step
    known.add_step("s", counted, verdict="ok", n=0)
    known.set_output("said", "hello")
    with pytest.raises(UsageError, match=r"recipe 'r', output 'said': .*\(got 'hello'\)"):
        run_recipe(known, cwd=tmp_path, config=config())


def test_a_refusal_by_ninja_inside_ctx_run_is_one_line_without_ninja_s_frames(
    tmp_path: Path,
) -> None:
    @shinobi.step(flaky)
    def elsewhere(ctx: StepContext) -> StepResult:
        return ctx.run(backend="nosuchbackend")

    result = run_recipe(elsewhere, {"counter": str(tmp_path / "c")}, cwd=tmp_path, config=config())
    (step,) = result.steps
    assert step.error is not None
    assert step.error.startswith("the orchestration function raised BackendNotFound: unknown")
    assert "traceback" not in step.error
    assert "registry.py" not in step.stderr and "Traceback" not in step.stderr


class Flagged(BaseModel):
    flag: shinobi.steps.File | None = None


flagging = Cab(
    "flagging",
    ["true"],
    CountIn,
    Flagged,
    {
        "verdict": ParamMeta(skip=True),
        "n": ParamMeta(skip=True),
        "flag": ParamMeta(implicit="{verdict}.flag"),
    },
)


def test_a_result_made_from_ctx_run_s_is_taken_made_or_cached(tmp_path: Path) -> None:
    """It failed on an optional output the tool did not make, then on 'cached'."""
    import dataclasses

    @shinobi.step(flagging)
    def noted(ctx: StepContext) -> StepResult:
        ran = ctx.run()
        return dataclasses.replace(ran, warnings=[*ran.warnings, "checked"])

    recipe = Recipe("r")
    recipe.add_step("n", noted, verdict="ok", n=0)
    cached = load_config({"cache.dir": str(tmp_path / "cache")})
    for _ in range(2):  # made, then served by the cache
        result = run_recipe(recipe, cwd=tmp_path, config=cached)
        assert result.ok, result.error
        assert "checked" in result.steps[0].warnings


def test_a_step_name_given_to_the_decorator_of_a_cab_with_a_name_input_is_refused(
    tmp_path: Path,
) -> None:
    """The input was silently taken for the step's name, and then reported unwired."""

    class NameIn(BaseModel):
        name: str

    imager = Cab("imager", ["/bin/echo"], NameIn, None, {"name": ParamMeta(flag="-name")})
    recipe = Recipe("r")
    with pytest.raises(ValueError, match=r"step\(name='img2'\) names the step, but cab 'imager'"):

        @recipe.step(imager, name="img2")
        def image(ctx: StepContext) -> StepResult:
            return ctx.run()

    def image2(ctx: StepContext) -> StepResult:  # the way the refusal names
        return ctx.run()

    recipe.add_step("image", shinobi.step(imager)(image2), name="img2")
    result = run_recipe(recipe, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.steps[0].stdout == "-name img2\n"
