"""testbed/lib.sh: a wait on an engine ends, and says what to look at.

``srun --time=1 true`` in the Slurm check waited for ever on a node that
never took the job, and wait_for's poll hung on a daemon that accepted the
connection and never answered: up.sh (and CI) hung with no word.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

LIB = Path(__file__).resolve().parents[2] / "testbed" / "lib.sh"


def _bash(script: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        ["bash", "-c", f"set -euo pipefail; ENGINE=slurm; source {LIB}; {script}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"PATH": "/usr/bin:/bin", "TESTBED_STATE": "/tmp/no-testbed-state"},
    )
    return done, time.monotonic() - started


def test_a_command_that_never_finishes_is_stopped_and_says_what_to_look_at() -> None:
    done, took = _bash('bounded 1 "srun --time=1 true" "squeue and slurmctld.log" sleep 600')
    assert took < 10 and done.returncode == 1
    assert done.stderr == (
        "[slurm] ERROR: srun --time=1 true did not finish within 1s:"
        " look at squeue and slurmctld.log\n"
    )


def test_a_command_that_finishes_keeps_its_exit_status() -> None:
    done, _ = _bash('bounded 5 "x" "y" sh -c "exit 3" || echo "rc=$?"')
    assert done.stdout == "rc=3\n" and done.stderr == ""


def test_a_poll_that_hangs_ends_at_the_deadline_naming_the_engine_logs() -> None:
    done, took = _bash('wait_for 2 "slurmctld" sleep 600')
    assert took < 15 and done.returncode == 1
    assert done.stderr == (
        "[slurm] ERROR: timed out after 2s waiting for slurmctld:"
        " look at the logs in /tmp/no-testbed-state/slurm/\n"
    )
