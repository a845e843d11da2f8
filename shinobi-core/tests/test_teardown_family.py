"""A tool for teardown tests (no tests here): a process family that tries hard to outlive its step.

``python test_teardown_family.py root TAG MARKERS`` starts, besides itself, a child
in its own process group, a daemon that calls ``setsid()`` after a double fork
(orphaned, in a session of its own), a child in a session of its own with an
empty environment, and a child that ignores SIGTERM, then sleeps. Given a
WORKSPACE as a fourth argument, a "scribe" that ignores SIGTERM appends to a
file in it until killed, and leaves ``MARKERS.orphaned`` behind if the
workspace disappears while it is still alive. Every member writes ``MARKERS.<role>`` once it is in place and keeps
``TAG`` on its command line, so a test can wait for the whole family and then
look for survivors in /proc.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def _ready(markers: str, role: str) -> None:
    Path(f"{markers}.{role}").write_text(str(os.getpid()))


def _spawn(role: str, tag: str, markers: str, *extra: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, __file__, role, tag, markers, *extra]
    if role == "clean":  # leaves the session and drops the environment (and its tag)
        return subprocess.Popen(argv, env={}, start_new_session=True)
    return subprocess.Popen(argv)


def _scribe(markers: str, workspace: str) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _ready(markers, "scribe")
    while True:
        try:
            with open(os.path.join(workspace, "heartbeat"), "a") as fh:
                fh.write(".")
        except OSError:
            _ready(markers, "orphaned")  # the workspace went while a writer lived
            return
        time.sleep(0.02)


def main(role: str, tag: str, markers: str, workspace: str | None = None) -> None:
    if role == "root":
        roles = ("group", "daemon", "clean", "stubborn")
        children = {r: _spawn(r, tag, markers) for r in roles}
        if workspace is not None:
            children["scribe"] = _spawn("scribe", tag, markers, workspace)
        children["daemon"].wait()  # the daemon's first fork exits at once
        _ready(markers, "root")
        time.sleep(300)
    elif role == "group":
        os.setpgid(0, 0)
        _ready(markers, role)
        time.sleep(300)
    elif role == "daemon":
        if os.fork():
            os._exit(0)
        os.setsid()
        if os.fork():
            os._exit(0)
        _ready(markers, role)
        time.sleep(300)
    elif role == "clean":
        _ready(markers, role)
        time.sleep(300)
    elif role == "scribe":
        assert workspace is not None
        _scribe(markers, workspace)
    elif role == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _ready(markers, role)
        time.sleep(300)


if __name__ == "__main__":
    main(*sys.argv[1:5])
