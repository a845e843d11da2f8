"""A ninja killed outright during a docker or podman step, live: the next run refuses
to start beside the container it left running.

The container belongs to the engine's daemon (containerd-shim, conmon), not to
the run: ``kill -9`` of ninja left it writing its product while the next run
in the workdir started the same step beside it, two writers on one file. Only
the left docker client was named, as a tool, and killing it stopped nothing.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from live_engines import OCI_ENGINES
from test_cli_live import _containers, _processes_with, ninja, start_marked_run


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_the_next_run_refuses_beside_a_killed_runs_container_until_it_is_removed(
    engine: str, tmp_path: Path
) -> None:
    proc, marker, _ = start_marked_run(engine, tmp_path, "nap", subprocess.DEVNULL)
    recipes = tmp_path / "recipes.py"
    left: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert time.monotonic() < deadline and proc.poll() is None, "the step never started"
            time.sleep(0.1)
        (ledger,) = (tmp_path / ".shinobi" / "runs").glob(f"*/{engine}/jobs.tsv")
        left = [line.split("\t")[0] for line in ledger.read_text().splitlines()]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert _containers(engine, f"name={left[0]}", "status=running") != []

        refused = ninja(tmp_path, "run", f"{recipes}:nap", "--backend", engine, "--marker", "m")
        assert refused.returncode == 74, refused.stderr
        said = " ".join(refused.stderr.split())
        assert f"{engine} container {left[0]} of run" in said and "(running)" in said, said
        stop = re.search(rf"({engine} rm -f [^;)]*{left[0]})", said)
        assert stop is not None, said
        assert not marker.with_name("m").exists()  # nothing of the refused run started

        subprocess.run(stop.group(1).split(), check=True, capture_output=True, timeout=120)
        deadline = time.monotonic() + 60
        while _processes_with(left[0]):  # the left client sees its container go, and exits
            assert time.monotonic() < deadline, "the killed run's client outlived its container"
            time.sleep(0.2)
        (tmp_path / "src.txt").write_text("x\n")
        paths = ["--source", "src.txt", "--middle", "m.txt", "--target", "t.txt"]
        done = ninja(tmp_path, "run", f"{recipes}:pipe", "--backend", engine, *paths)
        assert done.returncode == 0, done.stderr
    finally:
        if proc.poll() is None:
            proc.kill()
        for name in left:
            subprocess.run([engine, "rm", "-f", name], capture_output=True, timeout=120)
