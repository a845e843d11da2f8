"""The per-step loop: what its savings must not change.

The teardown tag's prefix is made once per process (a forked child makes
its own), and the output still in a step's pipes when its leader exits is
read by one poll rather than by making each pipe non-blocking.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from shinobi import teardown
from shinobi.backends.base import RunControl
from shinobi.backends.process import run_process


def test_a_forked_child_tags_its_steps_with_its_own_pid() -> None:
    parent = teardown.run_prefix()  # made, and kept, before the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its prefix and leave at once
        os.write(write, teardown.new_tag().encode())
        os._exit(0)
    os.close(write)
    child_tag = os.read(read, 200).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert parent.startswith(f"{os.getpid()}-")
    assert child_tag.startswith(f"{pid}-")
    assert teardown.run_prefix() == parent


def test_a_full_pipe_left_at_exit_beside_a_daemon_holding_it_is_read_whole(
    tmp_path: Path,
) -> None:
    """The leader fills stdout's pipe (more than one read's worth) and exits while a
    daemon still holds the pipe open: all of it is the step's, none is waited for."""
    marker = tmp_path / "daemon.pid"
    size = 60000  # under a pipe's 64 KiB, so it is all still there at the exit
    script = f"sleep 30 & echo $! > {marker}; head -c {size} /dev/zero | tr '\\0' x; printf e >&2"
    out = tmp_path / "step.out"
    try:
        for _ in range(5):
            started = time.monotonic()
            run = run_process(
                ["/bin/sh", "-c", script],
                cwd=str(tmp_path),
                control=RunControl(),
                stdout_path=str(out),
                stderr_path=str(tmp_path / "step.err"),
            )
            assert time.monotonic() - started < 15  # not held for the daemon's 30 s
            assert run.returncode == 0
            assert (run.stdout, run.stderr) == ("x" * size, "e")
            os.kill(int(marker.read_text()), signal.SIGKILL)
            out.unlink()
    finally:
        if marker.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(marker.read_text()), signal.SIGKILL)
