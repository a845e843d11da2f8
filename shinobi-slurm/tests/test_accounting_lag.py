"""While accounting lags, the controller's queue says how a job ended.

The squeue fallback for jobs sacct does not list yet left out ``-t all``, so
squeue left out jobs that had already ended (slurmctld keeps them, final
state and all, for ``MinJobAge``): ``ninja status`` of a launch whose step
had failed said "running: 3 unknown" and exited 0, and ``ninja run
--backend slurm`` waited two minutes for a job that had completed at once.
squeue cannot say an ended job's exit code, nor who cancelled it; that is said.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import pytest
from conftest import RECIPES, Ninja
from launches import steps, submit, wait_final

from shinobi.launch.handle import LaunchHandle, LaunchJob
from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.poller import PollTuning, SacctPoller
from shinobi_slurm.queue import query_queue
from shinobi_slurm.status import launch_statuses

T = "2026-12-03T10:38:2"
QUEUE = (
    f"21|COMPLETED|None|{T}3|{T}3|shinobi-R\n"
    f"22|FAILED|NonZeroExitCode|{T}4|{T}4|shinobi-R\n"
    f"23|CANCELLED|DependencyNeverSatisfied|{T}5|{T}5|shinobi-R\n"
)


class Lagging:
    """sacct that lists nothing yet; squeue that lists ``queue`` only when asked
    for every state (``-t all``), as the real one leaves out ended jobs otherwise."""

    def __init__(self, queue: str = QUEUE) -> None:
        self.queue = queue
        self.calls: list[tuple[str, list[str]]] = []
        self.lock = threading.Lock()

    def run(self, tool: str, args: Sequence[str], *, stdin: str | None = None) -> str:
        with self.lock:
            self.calls.append((tool, list(args)))
        if tool == "squeue" and "-t" in args and args[args.index("-t") + 1] == "all":
            wanted = set(args[args.index("-j") + 1].split(","))
            return "".join(
                line + "\n" for line in self.queue.splitlines() if line.split("|")[0] in wanted
            )
        return ""


def _launch() -> LaunchHandle:
    return LaunchHandle(
        engine="slurm",
        recipe="ch",
        run_id="R",
        workdir="/w",
        state="submitted",
        created=time.time(),
        jobs=[
            LaunchJob("one", job_id="21"),
            LaunchJob("two", job_id="22", after=["one"]),
            LaunchJob("three", job_id="23", after=["two"]),
        ],
        extra={"job_name": "shinobi-R"},
    )


def test_the_queue_is_asked_for_ended_jobs_too() -> None:
    found, away = query_queue(cast(SlurmCommands, Lagging()), ["21", "22", "23"])
    assert away is None
    done, failed, cancelled = found["21"][0], found["22"][0], found["23"][0]
    assert done.final and (done.exit_code, done.end) == (0, f"{T}3")
    assert failed.final and failed.exit_code is None  # squeue does not say it
    assert cancelled.final and not cancelled.started


def test_status_of_a_failed_launch_accounting_has_not_recorded_says_failed() -> None:
    slurm = Lagging()
    (found,) = launch_statuses(cast(SlurmCommands, slurm), [_launch()])
    by_step = {s.step: s for s in found.steps}
    assert found.state == "failed", [(s.step, s.phase, s.detail) for s in found.steps]
    assert by_step["one"].phase == "completed" and by_step["one"].exit_code == "0:0"
    assert by_step["two"].phase == "failed"
    assert (
        by_step["two"].detail is not None and "exit code is not known yet" in by_step["two"].detail
    )
    assert by_step["three"].phase == "cancelled"
    assert by_step["three"].detail == "never ran: two did not succeed"
    # a constant number of scheduler calls: one sacct, one squeue for all three jobs
    assert [tool for tool, _ in slurm.calls] == ["sacct", "squeue"]


def test_a_job_cancelled_by_someone_is_not_said_to_be_cancelled_by_slurm() -> None:
    slurm = Lagging(f"21|CANCELLED|None|{T}3|{T}4|shinobi-R\n")
    handle = _launch()
    handle.jobs = handle.jobs[:1]
    (found,) = launch_statuses(cast(SlurmCommands, slurm), [handle])
    assert found.steps[0].phase == "cancelled"
    assert found.steps[0].detail == (
        "cancelled; by whom is not known yet (Slurm's accounting has not recorded the job;"
        " squeue does not say)"
    )


def test_the_poller_ends_a_wait_when_the_queue_says_the_job_ended() -> None:
    slurm = Lagging()
    poller = SacctPoller(cast(SlurmCommands, slurm), PollTuning(first=0.01, ceiling=0.05))
    watch = poller.watch("21")
    assert watch.done.wait(10), "the wait never ended"
    assert watch.error is None and watch.record is not None
    assert (watch.record.state, watch.record.exit_code) == ("COMPLETED", 0)


# -- live ---------------------------------------------------------------------------

EMPTY_SACCT = "#!/bin/sh\nexit 0\n"  # accounting that has not recorded the jobs yet


def _shim(tmp_path: Path, body: str) -> dict[str, str]:
    bin_dir = tmp_path / "shim"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "sacct").write_text(body)
    (bin_dir / "sacct").chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.usefixtures("slurm")
def test_status_of_a_failed_launch_is_failed_while_accounting_lags(
    ninja: Ninja, tmp_path: Path
) -> None:
    launch = submit(ninja, f"{RECIPES}/failing.py:chain", "--marker", str(tmp_path / "m"))
    found = wait_final(ninja, launch["run_id"])  # as accounting says, once it has the jobs
    real = steps(found)
    assert found["exit"] == 1 and found["state"] == "failed", found
    lagging = _shim(tmp_path, EMPTY_SACCT)
    done = ninja("status", launch["run_id"], "--json", **lagging)
    assert done.returncode == 1, done.stdout + done.stderr
    assert '"state": "failed"' in done.stdout
    shown = ninja("status", launch["run_id"], **lagging)
    assert "boom" in shown.stdout and "exit code is not known yet" in shown.stdout
    assert "running" not in shown.stdout.splitlines()[-1], shown.stdout
    assert real["boom"]["phase"] == "failed"


@pytest.mark.usefixtures("slurm")
def test_a_run_ends_its_step_when_the_job_ends_while_accounting_lags(
    ninja: Ninja, tmp_path: Path
) -> None:
    (tmp_path / "g.py").write_text(
        "from pydantic import BaseModel\n"
        "from shinobi.steps import Cab, Recipe\n"
        "class N(BaseModel):\n    pass\n"
        "g = Recipe('g', N, N)\n"
        "g.add_step('p', Cab('p', ['/bin/sh', '-c', 'echo hello; exit 5'], N, N))\n"
    )
    started = time.monotonic()
    done = ninja(
        "run", "g.py:g", "--backend", "slurm", "--no-cache", **_shim(tmp_path, EMPTY_SACCT)
    )
    took = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    assert took < 60, f"took {took:.0f} s (missing_limit is 120 s)"
    said = done.stdout + done.stderr
    assert "exited with code 5" in said, said  # the controller's record has the exit code
