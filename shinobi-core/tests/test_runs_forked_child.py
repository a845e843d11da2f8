"""A run whose pystep forked a child that outlives it still reads as ended.

The child shared the run's locked record file, so the lock outlived ninja:
``ninja runs`` said ``running (pid N)`` of a pid long gone, and ``ninja clean
--runs`` kept the folder as still running.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

RECIPE = """
import os, time
import shinobi

@shinobi.pystep
def forker(secs: int) -> None:
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # let go of ninja's pipes: the test reads them to their end
            os.dup2(null, fd)
        time.sleep(secs)
        os._exit(0)
"""


def test_a_forked_child_does_not_keep_the_run_running(
    tmp_path: Path, ninja: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    (tmp_path / "r.py").write_text(RECIPE)
    done = ninja("run", "r.py:forker", "--secs", "20")
    assert done.returncode == 0, done.stderr
    listed = ninja("runs", "--json")
    assert listed.returncode == 0, listed.stderr
    (run,) = json.loads(listed.stdout)["runs"]
    assert (run["state"], run["pid"]) == ("ok", None), run
