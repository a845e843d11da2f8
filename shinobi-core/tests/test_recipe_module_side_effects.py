"""What a recipe module does to ninja's own process as it loads, said as the recipe's doing.

A recipe file is a Python module: it can close ninja's streams, start threads
that outlive the run, or be named so that it reads as an option. Each of these
ended in an internal error, a silent hang or a misleading usage line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

NinjaRun = Callable[..., subprocess.CompletedProcess[str]]

ONE_STEP = """
from shinobi.steps import Cab, Recipe

pipe = Recipe("pipe")
pipe.add_step("t", Cab("t", ["/bin/true"]))
"""


def test_a_recipe_that_closes_stdout_is_refused_as_its_own_doing(
    ninja: NinjaRun, recipe_file: Callable[[str], Path]
) -> None:
    recipe_file("import sys\nsys.stdout.close()\n" + ONE_STEP)
    proc = ninja("run", "recipe.py:pipe")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        "ninja: error: recipe.py: importing the recipe file closed sys.stdout, where ninja"
        " prints; a recipe file should only define recipes\n"
    )


def test_a_recipe_path_too_long_for_the_file_system_is_bad_usage(ninja: NinjaRun) -> None:
    proc = ninja("run", "a" * 5000 + ".py:pipe")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("ninja: error: recipe file 'aaaa")
    assert "has a name too long for this file system (5003 bytes); check the path" in proc.stderr
    assert len(proc.stderr) < 300  # the name is cut, not echoed whole


def test_a_target_after_double_dash_is_the_target(
    ninja: NinjaRun, recipe_file: Callable[[str], Path]
) -> None:
    recipe_file(ONE_STEP, "-r.py")
    for command in ("run", "graph"):
        proc = ninja(command, "--", "-r.py:pipe")
        assert proc.returncode == 0, proc.stderr


def test_threads_a_recipe_started_are_waited_for_and_said(
    ninja: NinjaRun, recipe_file: Callable[[str], Path]
) -> None:
    starts = "import threading, time\n"
    starts += "threading.Thread(target=time.sleep, args=(0.5,), name='flusher').start()\n"
    recipe_file(starts + ONE_STEP)
    proc = ninja("run", "recipe.py:pipe")
    assert proc.returncode == 0, proc.stderr
    assert "waiting for thread(s) the recipe started to end (flusher)" in proc.stderr


def test_a_ctrl_c_ends_the_wait_for_a_recipes_thread_without_a_traceback(
    recipe_file: Callable[[str], Path], tmp_path: Path
) -> None:
    starts = "import threading, time\n"
    starts += "threading.Thread(target=time.sleep, args=(3600,), name='sleeper').start()\n"
    recipe_file(starts + ONE_STEP)
    script = Path(sys.executable).with_name("ninja")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "shinobi.cli"]
    env = {**os.environ, "SHINOBI_CACHE_DIR": str(tmp_path / ".cache")}
    proc = subprocess.Popen(
        [*argv, "run", "recipe.py:pipe"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / ".shinobi" / "runs").is_dir() or not _ended(tmp_path):
            assert time.monotonic() < deadline, "the run never ended"
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted while waiting for the recipe's threads" in err
    assert "Traceback" not in err


def _ended(workdir: Path) -> bool:
    records = list((workdir / ".shinobi" / "runs").glob("*/.running"))
    return bool(records) and '"ended": true' in records[0].read_text()


def test_an_executors_idle_workers_are_no_thread_to_wait_for(
    ninja: NinjaRun, recipe_file: Callable[[str], Path]
) -> None:
    """They end in Python's own exit hook: waited for first, they hung ninja for ever."""
    pool = "from concurrent.futures import ThreadPoolExecutor\n"
    pool += "POOL = ThreadPoolExecutor(2)\nWARM = POOL.submit(lambda: 42)\n"
    recipe_file(pool + ONE_STEP)
    proc = ninja("run", "recipe.py:pipe", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "waiting for thread" not in proc.stderr


def test_a_recipe_that_tees_stdout_through_an_object_of_its_own_runs(
    ninja: NinjaRun, recipe_file: Callable[[str], Path], tmp_path: Path
) -> None:
    """An object with no `closed` is no closed stream (it was internal error 70)."""
    tee = (
        "import sys\n"
        "class Tee:\n"
        "    def __init__(self, *streams): self.streams = streams\n"
        "    def write(self, text): return [s.write(text) for s in self.streams][0]\n"
        "    def flush(self): [s.flush() for s in self.streams]\n"
        "sys.stdout = Tee(sys.__stdout__, open('copy.txt', 'a'))\n"
    )
    recipe_file(tee + ONE_STEP)
    proc = ninja("run", "recipe.py:pipe")
    assert proc.returncode == 0, proc.stderr
