"""The wavefront executor's rules, observed through timestamps the tools record."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi import backends
from shinobi.backends.native import NativeBackend
from shinobi.errors import ShinobiError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe

# A tool that records when it starts and ends, sleeping in between.
SCRIPT = 'date +%s.%N > "$1.start"; sleep "$2"; date +%s.%N > "$1.end"; echo "out:$1"; exit "$3"'


class TimedIn(BaseModel):
    stamp: str
    seconds: float = 0.0
    code: int = 0


class NoIn(BaseModel):
    pass


timed = Cab(
    "timed",
    ["/bin/sh", "-c", SCRIPT, "timed"],
    TimedIn,
    field_meta={k: ParamMeta(positional=True) for k in ("stamp", "seconds", "code")},
)


def span(tmp_path: Path, name: str) -> tuple[float, float]:
    start = float((tmp_path / f"{name}.start").read_text())
    end = float((tmp_path / f"{name}.end").read_text())
    return start, end


def independent(tmp_path: Path, specs: list[tuple[str, float, int]], workers: int) -> Recipe:
    recipe = Recipe("r", NoIn, max_workers=workers)
    for name, seconds, code in specs:
        recipe.add_step(name, timed, stamp=str(tmp_path / name), seconds=seconds, code=code)
    return recipe


def test_one_worker_runs_in_exact_declaration_order(tmp_path: Path) -> None:
    names = ["c", "a", "d", "b"]
    result = run_recipe(independent(tmp_path, [(n, 0.0, 0) for n in names], 1), cwd=tmp_path)
    assert result.ok
    spans = [span(tmp_path, n) for n in names]
    for (_, end), (start, _) in pairwise(spans):
        assert end <= start


def test_independent_branches_overlap_with_more_workers(tmp_path: Path) -> None:
    recipe = independent(tmp_path, [("a", 0.6, 0), ("b", 0.6, 0)], 2)
    assert run_recipe(recipe, cwd=tmp_path).ok
    (a0, a1), (b0, b1) = span(tmp_path, "a"), span(tmp_path, "b")
    assert b0 < a1 and a0 < b1


def test_a_huge_worker_count_starts_no_more_threads_than_steps_run_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    started: list[str] = []
    real_start = threading.Thread.start

    def counting_start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", counting_start)
    specs = [(name, 0.3, 0) for name in ("a", "b", "c")]
    result = run_recipe(
        independent(tmp_path, specs, 500), cwd=tmp_path
    )  # 500: safe if this regresses
    assert result.ok, result.error
    workers = [name for name in started if name.startswith("shinobi-worker-")]
    assert 1 <= len(workers) <= 3, workers
    spans = [span(tmp_path, name) for name, _, _ in specs]
    assert max(start for start, _ in spans) < min(end for _, end in spans)  # all at once


def test_results_are_assembled_in_declaration_order(tmp_path: Path) -> None:
    recipe = independent(tmp_path, [("slow", 0.5, 0), ("fast", 0.0, 0)], 2)
    result = run_recipe(recipe, cwd=tmp_path)
    assert span(tmp_path, "fast")[1] < span(tmp_path, "slow")[1]  # fast finished first
    assert [s.name for s in result.steps] == ["slow", "fast"]
    assert result.stdout.index("slow") < result.stdout.index("fast")


def test_first_failure_by_declaration_is_reported_and_nothing_new_starts(tmp_path: Path) -> None:
    recipe = independent(tmp_path, [("first", 0.5, 3), ("second", 0.0, 4), ("third", 0.0, 0)], 2)
    result = run_recipe(recipe, cwd=tmp_path)
    assert not result.ok
    assert result.failed_step == "first"
    assert "exited with code 3" in (result.error or "")
    assert (tmp_path / "first.end").exists()  # the running step was allowed to finish
    assert not (tmp_path / "third.start").exists()  # nothing new started after the failure


def test_after_a_failure_no_recipe_of_the_run_starts_anything_new(tmp_path: Path) -> None:
    """A nested recipe beside the failed step stopped too: it ran on for hours."""
    branch = independent(tmp_path, [("nap0", 0.6, 0), ("nap1", 0.6, 0), ("nap2", 0.0, 0)], 2)
    recipe = Recipe("pipe", NoIn, max_workers=2)
    recipe.add_step("B", branch)
    recipe.add_step("bad", timed, stamp=str(tmp_path / "bad"), seconds=0.1, code=9)
    result = run_recipe(recipe, cwd=tmp_path)
    assert not result.ok and result.failed_step == "bad"
    assert (tmp_path / "nap0.end").exists()  # running when bad failed: allowed to finish
    assert not (tmp_path / "nap2.start").exists()
    nested = next(s for s in result.steps if s.name == "B")
    assert nested.status == "cancelled" and "after a step failed" in (nested.error or "")


def test_dependants_wait_for_their_producers(tmp_path: Path) -> None:
    class PathIn(BaseModel):
        stamp: str
        after: str | None = None

    class PathOut(BaseModel):
        stamp: str | None = None

    chained = Cab(
        "chained",
        ["/bin/sh", "-c", 'date +%s.%N > "$1.start"; sleep 0.2; date +%s.%N > "$1.end"', "x"],
        PathIn,
        PathOut,
        {"stamp": ParamMeta(positional=True), "after": ParamMeta(skip=True)},
    )
    recipe = Recipe("r", NoIn, max_workers=4)
    recipe.add_step("b", chained, stamp=str(tmp_path / "b"), after=recipe.outputs.a.stamp)
    recipe.add_step("a", chained, stamp=str(tmp_path / "a"))
    # PathOut.stamp defaults to None, so make a's output known by passthrough naming.
    result = run_recipe(recipe, cwd=tmp_path)
    assert result.ok, result.error
    assert span(tmp_path, "a")[1] <= span(tmp_path, "b")[0]


def test_a_backend_refusing_a_step_at_run_time_fails_it_in_its_own_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend's ShinobiError is its word on the step (no room for it, a tool it
    cannot reach): read as a crash, it became "internal error: ShinobiError: ...",
    a bug of ninja's to report."""

    class Refusing(NativeBackend):
        def run(self, invocation: Any, control: Any) -> Any:
            raise ShinobiError("no scratch space left on this host")

    real = backends.get_backend
    monkeypatch.setattr(
        backends,
        "get_backend",
        lambda name, settings=None: (
            Refusing(settings) if name == "native" else real(name, settings)
        ),
    )
    result = run_recipe(independent(tmp_path, [("a", 0.0, 0)], 1), cwd=tmp_path)
    assert not result.ok and result.failed_step == "a"
    assert result.error == "no scratch space left on this host"
    assert not (tmp_path / "a.start").exists()


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("kill -TERM $$; sleep 5", "killed by SIGTERM (signal 15)"),
        ("kill -KILL $$; sleep 5", "killed by SIGKILL (signal 9): usually the out-of-memory"),
        ("kill -SEGV $$; sleep 5", "killed by SIGSEGV"),
    ],
)
def test_a_killed_step_names_the_signal(tmp_path: Path, script: str, expected: str) -> None:
    killer = Cab("killer", ["/bin/sh", "-c", script])
    result = run_recipe(killer, cwd=tmp_path)
    assert not result.ok
    assert expected in (result.error or "")


def test_each_step_writes_its_output_to_a_log_file(tmp_path: Path) -> None:
    talker = Cab("talker", ["/bin/sh", "-c", "echo hello-log; echo oops >&2"])
    run_recipe(talker, cwd=tmp_path)
    logs = list((tmp_path / ".shinobi" / "runs").glob("*/logs/talker.out"))
    assert len(logs) == 1 and logs[0].read_text() == "hello-log\n"
    assert logs[0].with_suffix(".err").read_text() == "oops\n"
