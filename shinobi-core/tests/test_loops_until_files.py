"""A loop's until file is judged against how it was right before that loop started.

Two ways the "a flag left by an earlier run does not count" rule went wrong:
only the first cycle's until path was noted, so with a flag per cycle
(``conv-{cycle}.flag``) one a run left for a later cycle ended today's loop
there; and every loop's file was noted once before the whole run, so a second
loop sharing the path took the flag the first loop wrote today for its own.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi.config import load_config
from shinobi.graph import build_graph
from shinobi.plan import plan_graph
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def config() -> Any:
    return load_config({"cache.enabled": False})


def ran(tmp_path: Path) -> list[str]:
    return (tmp_path / "log").read_text().splitlines()


# -- a flag per cycle ---------------------------------------------------------


class CycleIn(BaseModel):
    cycle: int = 0
    stop_at: int = 2


class CycleOut(BaseModel):
    image: File
    flag: File | None = None


per_cycle = Cab(
    "body",
    [
        "/bin/sh",
        "-c",
        'echo "$0" >> log; echo img > img-$0.txt; [ $0 -ge $1 ] && touch conv-$0.flag; true',
    ],
    CycleIn,
    CycleOut,
    {
        "cycle": ParamMeta(positional=True),
        "stop_at": ParamMeta(positional=True),
        "image": ParamMeta(implicit="img-{cycle}.txt"),
        "flag": ParamMeta(implicit="conv-{cycle}.flag"),
    },
)


class StopIn(BaseModel):
    stop_at: int = 2


class ImageOut(BaseModel):
    image: File


def per_cycle_pipe() -> Recipe:
    pipe = Recipe("pipe", StopIn, ImageOut)
    loop = pipe.add_loop(
        "L", per_cycle, max_iter=5, until="flag", index_input="cycle", stop_at=pipe.inputs.stop_at
    )
    pipe.set_output("image", loop.outputs.image)
    return pipe


def test_a_later_cycles_flag_left_by_an_earlier_run_does_not_end_the_loop(
    tmp_path: Path,
) -> None:
    (tmp_path / "conv-2.flag").touch()  # an earlier run converged at cycle 2
    result = run_recipe(per_cycle_pipe(), {"stop_at": 4}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert ran(tmp_path) == ["1", "2", "3", "4"]
    assert [s.status for s in result.steps] == ["ok", "ok", "ok", "ok", "skipped"]
    assert str(result.outputs["image"]) == "img-4.txt"
    assert result.warnings == []


def test_a_later_cycles_stale_flag_is_no_convergence_in_the_last_cycle(tmp_path: Path) -> None:
    (tmp_path / "conv-5.flag").touch()
    result = run_recipe(per_cycle_pipe(), {"stop_at": 99}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    (said,) = result.warnings
    assert "ran all 5 iterations without converging" in said


def test_a_cached_rerun_with_a_flag_per_cycle_converges_where_the_run_did(tmp_path: Path) -> None:
    cached = load_config({"cache.enabled": True, "cache.dir": str(tmp_path / "cache")})
    first = run_recipe(per_cycle_pipe(), {"stop_at": 3}, cwd=tmp_path, config=cached)
    again = run_recipe(per_cycle_pipe(), {"stop_at": 3}, cwd=tmp_path, config=cached)
    assert [s.status for s in first.steps] == ["ok", "ok", "ok", "skipped", "skipped"]
    assert [s.status for s in again.steps] == ["cached"] * 3 + ["skipped"] * 2
    assert ran(tmp_path) == ["1", "2", "3"]  # the re-run ran nothing


# -- loops sharing one until path ---------------------------------------------


class ShareIn(BaseModel):
    val: File
    cycle: int = 0
    need: int = 1


class ShareOut(BaseModel):
    val: File
    flag: File | None = None


#: Logs "VAL CYCLE", rewrites VAL, and writes done.flag from cycle NEED on.
SHARING = 'echo "$0 $1" >> log; echo "$1" >> "$0"; [ $1 -ge $2 ] && touch done.flag; true'
sharing = Cab(
    "body",
    ["/bin/sh", "-c", SHARING],
    ShareIn,
    ShareOut,
    {
        "val": ParamMeta(positional=True),
        "cycle": ParamMeta(positional=True),
        "need": ParamMeta(positional=True),
        "flag": ParamMeta(implicit="done.flag"),
    },
)


def two_loops(body: Any = sharing, **handed: Any) -> Recipe:
    """``phase`` converges at its first cycle, ``amp`` (after it) at its third."""
    pipe = Recipe("pipe")
    first = pipe.add_loop(
        "phase", body, max_iter=4, until="flag", index_input="cycle", val="v", need=1, **handed
    )
    pipe.add_loop(
        "amp",
        body,
        max_iter=4,
        until="flag",
        index_input="cycle",
        val=first.outputs.val,  # amp runs after phase
        need=3,
        **handed,
    )
    return pipe


def test_a_loop_after_another_with_the_same_until_path_runs_to_its_own_flag(
    tmp_path: Path,
) -> None:
    result = run_recipe(two_loops(), cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert ran(tmp_path) == ["v 1", "v 1", "v 2", "v 3"]
    statuses = {s.name: s.status for s in result.steps}
    assert statuses["amp.3"] == "ok"
    assert statuses["amp.4"] == "skipped"
    (said,) = result.warnings  # said once, before the run
    assert "loops 'phase' and 'amp' share the until file" in said
    assert str(tmp_path / "done.flag") in said


class HandedIn(BaseModel):
    val: File
    cycle: int = 0
    need: int = 1
    flag: File


handed_body = Cab(
    "body",
    ["/bin/sh", "-c", SHARING.replace("done.flag", '"$3"')],
    HandedIn,
    ShareOut,
    {
        "val": ParamMeta(positional=True),
        "cycle": ParamMeta(positional=True),
        "need": ParamMeta(positional=True),
        "flag": ParamMeta(positional=True),
    },
)


class HandedBodyOut(BaseModel):
    val: File
    flag: File | None = None


def test_loops_handed_one_until_path_judge_it_from_their_own_start(tmp_path: Path) -> None:
    body = Recipe("cycle", HandedIn, HandedBodyOut)
    body.add_step(
        "work",
        handed_body,
        val=body.inputs.val,
        cycle=body.inputs.cycle,
        need=body.inputs.need,
        flag=body.inputs.flag,
    )
    body.set_output("val", body.outputs.work.val)
    body.set_output("flag", body.inputs.flag)
    (tmp_path / "done.flag").touch()  # and one left by an earlier run, too
    result = run_recipe(two_loops(body, flag="done.flag"), cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert ran(tmp_path) == ["v 1", "v 1", "v 2", "v 3"]


class One(BaseModel):
    val: File
    need: int


class Many(BaseModel):
    vals: list[File]
    needs: list[int]


def scattered() -> Recipe:
    inner = Recipe("inner", One)
    inner.add_loop(
        "sc",
        sharing,
        max_iter=4,
        until="flag",
        index_input="cycle",
        val=inner.inputs.val,
        need=inner.inputs.need,
    )
    outer = Recipe("outer", Many)
    outer.add_step(
        "per", inner, scatter=["val", "need"], val=outer.inputs.vals, need=outer.inputs.needs
    )
    return outer


@pytest.mark.parametrize("workers", [1, 2])
def test_scattered_loops_sharing_an_until_path_each_run_to_their_own_flag(
    tmp_path: Path, workers: int
) -> None:
    cfg = load_config({"cache.enabled": False, "execution.max_workers": workers})
    result = run_recipe(
        scattered(), {"vals": ["a", "b"], "needs": [1, 3]}, cwd=tmp_path, config=cfg
    )
    assert result.ok, result.error
    assert ran(tmp_path) == ["a 1", "b 1", "b 2", "b 3"]
    assert any("loops 'per[0].sc' and 'per[1].sc' share" in w for w in result.warnings)


def test_loops_with_their_own_until_paths_are_not_warned_about(tmp_path: Path) -> None:
    from shinobi.stale_until import shared_until_warnings, until_files

    graph = build_graph(per_cycle_pipe())
    found = until_files(plan_graph(graph, {"stop_at": 2}, str(tmp_path)), str(tmp_path))
    assert [(u.loop, u.iteration) for u in found] == [("L", k) for k in range(1, 6)]
    assert shared_until_warnings(found) == []


def test_the_dryrun_warns_of_loops_sharing_an_until_path(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    recipe_file(Path(__file__).read_text() + "\npipe = two_loops()\n")
    done = ninja("run", "recipe.py:pipe", "--dryrun")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("share the until file") == 1
    assert "loops 'phase' and 'amp' share the until file" in done.stderr
    assert not (tmp_path / "log").exists()
