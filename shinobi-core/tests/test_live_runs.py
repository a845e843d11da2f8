"""A run refuses to start beside a tool that a killed ninja left running here.

A ninja killed outright cannot tear its step down: the tool writes on. The
next run started the same step again, both appended to one product, and the
run said ok (and cached the mixture): the tool opens its file for each row,
so the live-writer check, which sees files open at that instant, missed it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import _ninja

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    table: str = "t.tbl"

appender = Cab("append", ["sh", "-c", 'touch started; while :; do echo row >> "$0"; sleep 0.1; done'],
               In, None, {"table": ParamMeta(positional=True)})
r = Recipe("r", In)
r.add_step("append", appender, table=r.inputs.table)
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def _killed_mid_step(tmp_path: Path) -> None:
    """Start the recipe, and SIGKILL its ninja once the step runs."""
    run = subprocess.Popen([*_ninja(), "run", "r.py:r"], cwd=tmp_path, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists():
        assert run.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait()


def _orphans(tmp_path: Path) -> list[int]:
    """The tools still appending to this test's table."""
    found = subprocess.run(["pgrep", "-f", "echo row"], capture_output=True, text=True)
    pids = [int(p) for p in found.stdout.split()]
    return [p for p in pids if os.readlink(f"/proc/{p}/cwd") == str(tmp_path)]


def test_a_tool_left_by_a_killed_ninja_stops_the_next_run(tmp_path: Path, ninja: Ninja) -> None:
    (tmp_path / "r.py").write_text(RECIPE)
    _killed_mid_step(tmp_path)
    left = _orphans(tmp_path)
    assert left, "the step's tool should outlive a ninja killed outright"
    try:
        refused = ninja("run", "r.py:r")
        assert refused.returncode == 74, refused.stderr
        assert "tools an earlier run started here still run, though its ninja is gone" in (
            refused.stderr
        )
        assert f"stop them (kill {left[0]}" in refused.stderr
        assert "Traceback" not in refused.stderr
    finally:
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _orphans(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    # once they are gone, a run starts, and the dead run's marker is cleared
    (tmp_path / "r.py").write_text(RECIPE.replace("while :", "for i in 1"))
    done = ninja("run", "r.py:r", "--no-cache")
    assert done.returncode == 0, done.stderr
    assert os.listdir(tmp_path / ".shinobi" / "live") == []


def test_a_run_that_ends_leaves_no_marker(tmp_path: Path, ninja: Ninja) -> None:
    (tmp_path / "r.py").write_text(RECIPE.replace("while :", "for i in 1"))
    assert ninja("run", "r.py:r").returncode == 0
    assert os.listdir(tmp_path / ".shinobi" / "live") == []


def test_a_marker_of_a_ninja_still_running_is_left_alone(tmp_path: Path) -> None:
    """A second run beside a live one (another terminal) is not refused here: that
    run's ninja tears its own steps down."""
    from shinobi.live_runs import other_runs

    live = tmp_path / ".shinobi" / "live"
    live.mkdir(parents=True)
    (live / f"{os.getppid()}-abcd.20261205-000000-aaaaaa").write_text("x")
    other_runs(tmp_path / ".shinobi" / "runs")
    assert len(os.listdir(live)) == 1


def test_a_run_started_beside_another_of_this_workdir_is_warned(
    tmp_path: Path, ninja: Ninja
) -> None:
    """Both runs of one recipe wrote the same table and each said ok of the other's."""
    (tmp_path / "r.py").write_text(RECIPE.replace("while :", "for i in $(seq 30)"))
    first = subprocess.Popen(
        [*_ninja(), "run", "r.py:r", "--no-cache"], cwd=tmp_path, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        (going,) = os.listdir(tmp_path / ".shinobi" / "live")
        second = ninja("run", "r.py:r", "--no-cache", "--json")
        assert second.returncode == 0, second.stderr
        run_id = going.partition(".")[2]
        warned = json.loads(second.stdout)["warnings"]
        assert warned[0] == (
            f"another run is going in this workdir: {run_id} (pid {first.pid}); a step of each"
            " that writes the same path takes the other's product for its own (wait for it,"
            " or run in another directory)"
        )
        # and its step's result, which may be the other's product, is not stored (the
        # other run, started first, may have ended by then)
        (beside,) = warned[1:]
        assert beside.startswith(
            (f"another run of this workdir ({run_id})", "another run of this workdir (one that")
        )
        assert beside.endswith("so their results are not cached")
    finally:
        first.terminate()  # ninja tears its step down
        first.wait()


def _beside_a_run_of_this_process(workdir: Path) -> Any:
    """The result of a quick run in ``workdir`` while a thread's run of another
    recipe waits there (run_recipe, one process)."""
    import threading

    from pydantic import BaseModel

    from shinobi.runner import run_recipe
    from shinobi.steps import Cab, Recipe

    flag = workdir / "go"
    waits = Cab(
        "waits", ["sh", "-c", f"touch waiting; while [ ! -e '{flag}' ]; do sleep 0.05; done"]
    )
    recipe = Recipe("r", BaseModel)
    recipe.add_step("waits", waits)
    thread = threading.Thread(target=lambda: run_recipe(recipe, cwd=workdir, use_cache=False))
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not (workdir / "waiting").exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        quick = Recipe("q", BaseModel)
        quick.add_step("now", Cab("now", ["true"]))
        return run_recipe(quick, cwd=workdir, use_cache=False)
    finally:
        flag.touch()
        thread.join()


def test_a_run_beside_another_of_the_same_process_is_warned(tmp_path: Path) -> None:
    """A script's threads running one recipe in one workdir took each other's
    products as the CLI's runs did, with no warning: the process's own markers
    were skipped."""
    second = _beside_a_run_of_this_process(tmp_path)
    assert second.ok, second.error
    assert [w.split(":")[0] for w in second.warnings] == ["another run is going in this workdir"]


def test_a_run_on_another_host_of_a_shared_workdir_is_warned_of_not_judged_here(
    tmp_path: Path,
) -> None:
    """A workdir on NFS is seen from login and compute nodes: another host's run's
    pid means nothing here, and its marker was taken for a killed run's and removed."""
    from shinobi.live_runs import other_runs

    runs_root = tmp_path / ".shinobi" / "runs"
    live = tmp_path / ".shinobi" / "live"
    live.mkdir(parents=True)
    marker = live / "999999999-abc.1.20260101-000000-x"  # no such pid here
    marker.write_text("login2.cluster")
    (said,) = other_runs(runs_root)
    assert "20260101-000000-x (pid 999999999 on login2.cluster)" in said
    assert marker.exists()


def test_a_run_in_a_directory_whose_name_is_not_utf8_runs_and_is_guarded(
    tmp_path: Path,
) -> None:
    """Its marker could not be written: every run there ended as an internal error
    before its first step, and the guard against two runs there read another name."""
    odd = tmp_path / os.fsdecode(b"obs\xff")
    odd.mkdir()
    (odd / "r.py").write_text(RECIPE.replace("while :", "for i in 1"))
    done = subprocess.run([*_ninja(), "run", "r.py:r"], cwd=odd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    second = _beside_a_run_of_this_process(odd)
    assert second.ok, second.error
    assert [w.split(":")[0] for w in second.warnings] == ["another run is going in this workdir"]
