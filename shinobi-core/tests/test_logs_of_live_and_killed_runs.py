"""``ninja logs`` of a run still going, and of one whose ninja was killed.

A misspelt step with ``--follow`` was refused only once the run had ended
(hours later, on a real pipeline). A step of a ``kill -9``'d run with
provenance on read "it ended running" (the step ran when the manifest was
last written) and one that never started "it ended pending".
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from conftest import _ninja

RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    flag: Path

class Out(BaseModel):
    flag: Path

waits = Cab("waits", ["sh", "-c", 'touch "$0"; sleep 30'], In, Out,
            {"flag": ParamMeta(positional=True)})
after = Cab("after", ["sh", "-c", 'cat "$0"'], In, None, {"flag": ParamMeta(positional=True)})
r = Recipe("r")
r.add_step("slow", waits, flag=Path("started"))
r.add_step("next", after, flag=r.outputs.slow.flag)
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def _started(tmp_path: Path, *extra: str) -> subprocess.Popen[bytes]:
    (tmp_path / "r.py").write_text(RECIPE)
    run = subprocess.Popen(
        [*_ninja(), "run", "r.py:r", "--no-cache", *extra],
        cwd=tmp_path,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists():
        assert run.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    return run


def test_a_misspelt_step_is_refused_at_once_while_the_run_goes_on(
    tmp_path: Path, ninja: Ninja
) -> None:
    run = _started(tmp_path)
    try:
        (run_dir,) = (tmp_path / ".shinobi" / "runs").iterdir()
        said = ninja("logs", run_dir.name, "slwo", "--follow")
        assert run.poll() is None, "the refusal came only after the run had ended"
        assert said.returncode == 2
        assert f"run {run_dir.name} has no step 'slwo'; did you mean 'slow'?" in said.stderr
    finally:
        run.terminate()
        run.wait()


def test_the_steps_of_a_killed_run_say_how_far_it_got(tmp_path: Path, ninja: Ninja) -> None:
    run = _started(tmp_path, "--provenance")
    time.sleep(0.6)  # the manifest is written at most every half second
    os.killpg(run.pid, signal.SIGKILL)  # ninja and its step, as a lost node would
    run.wait()
    (run_dir,) = (tmp_path / ".shinobi" / "runs").iterdir()
    slow = ninja("logs", run_dir.name, "slow")
    assert slow.returncode == 2
    assert (
        "printed nothing, so it kept no logs (it was running when the run ended abruptly:"
        " how it ended is not known)"
    ) in slow.stderr, slow.stderr
    never = ninja("logs", run_dir.name, "next")
    assert never.returncode == 2
    assert f"step 'next' of run {run_dir.name} did not run, so it printed nothing" in (
        never.stderr
    ), never.stderr


LINGERS = """
from shinobi.steps import Cab, Recipe

r = Recipe("r")
r.add_step("s", Cab("s", ["sh", "-c", "echo going; touch started; sleep 3; touch done"]))
"""


def test_following_a_run_whose_ninja_is_killed_waits_for_the_tools_it_left(
    tmp_path: Path,
) -> None:
    """``--follow`` ended at once, exit 0 and without a word, while the step the
    killed ninja had started still ran: a follower took the logs for complete."""
    (tmp_path / "r.py").write_text(LINGERS)
    run = subprocess.Popen(
        [*_ninja(), "run", "r.py:r", "--no-cache"], cwd=tmp_path, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists():
        assert run.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    (run_dir,) = (tmp_path / ".shinobi" / "runs").iterdir()
    follow = subprocess.Popen(
        [*_ninja(), "logs", run_dir.name, "--follow"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)
    run.kill()  # ninja alone, as the out-of-memory killer would: its step runs on
    run.wait()
    out, err = follow.communicate(timeout=60)
    assert (tmp_path / "done").exists(), "--follow ended before the step the run left"
    assert follow.returncode == 0 and "going" in out
    assert f"run {run_dir.name} ended abruptly (its ninja was killed?)" in err
    assert "The tools it left running have ended too." in err


TALKS = """
from shinobi.steps import Cab, Recipe

r = Recipe("r")
r.add_step("s", Cab("s", ["sh", "-c", "touch started; while [ ! -e stop ]; do echo tick; sleep 0.2; done"]))
"""


def test_a_running_runs_last_activity_follows_its_tools_log(tmp_path: Path) -> None:
    """It stayed at the moment the step started while the tool wrote its log: for a
    10-hour imaging step the column said nothing happened for 10 hours."""
    from shinobi.local_runs import describe_run

    (tmp_path / "r.py").write_text(TALKS)
    run = subprocess.Popen(
        [*_ninja(), "run", "r.py:r", "--no-cache"], cwd=tmp_path, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(1.5)  # the log is written to, its folder not
        (run_dir,) = (tmp_path / ".shinobi" / "runs").iterdir()
        log = run_dir / "logs" / "s.out"
        seen = describe_run(run_dir)
        assert seen.running
        assert seen.modified >= log.stat().st_mtime - 0.5 > (run_dir / "logs").stat().st_mtime
    finally:
        (tmp_path / "stop").touch()
        run.wait(timeout=60)
