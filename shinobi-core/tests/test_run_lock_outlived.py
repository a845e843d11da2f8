"""A run whose ninja is gone is not listed as running because a child of it holds the lock.

A pystep's ``multiprocessing`` child forked from ninja shares the run lock's
open file. After a ``kill -9`` of ninja it held the lock on, and ``ninja
runs`` listed the run as running under a pid no process had any more; ``clean
--runs`` kept it and the docs' ``kill`` advice did nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from shinobi.local_runs import is_running

#: Holds the run, forks a child that keeps the lock's file, says so, and waits.
HOLDER = """
import os, sys, time
from pathlib import Path
from shinobi.local_runs import hold_run
hold_run(Path(sys.argv[1]), "r")
if os.fork() == 0:
    time.sleep(60)
    os._exit(0)
print("held", flush=True)
time.sleep(60)
"""


def _holders(run_dir: Path) -> list[int]:
    """The processes that have a file of ``run_dir`` open."""
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        if any(link.startswith(f"{run_dir}/") for link in links):
            found.append(int(pid))
    return found


def test_a_lock_kept_by_a_child_of_a_killed_ninja_is_no_running_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "20260101-000000-abcdef"
    run_dir.mkdir()
    ninja = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert ninja.stdout is not None and ninja.stdout.readline() == "held\n"
        assert is_running(run_dir)  # its ninja is alive
        ninja.send_signal(signal.SIGKILL)
        ninja.wait()
        assert _holders(run_dir), "the forked child should still hold the lock"
        assert not is_running(run_dir)
    finally:
        ninja.kill()
        for pid in _holders(run_dir):
            os.kill(pid, signal.SIGKILL)
