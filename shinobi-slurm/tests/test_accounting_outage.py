"""After an accounting outage, a job that had ended is reported as it ended.

With slurmdbd away, the poller waited for sacct until ``outage_limit``, then
failed the step and scancelled its job, saying it had cancelled it, though
the job had completed ten seconds before and slurmctld answered all along.
The controller's queue (one squeue call per round) is now asked while
accounting does not answer; a job it says has ended is finished with the
controller's record (``scontrol``: exit code and times), as accounting's
record would have finished it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import pytest
from conftest import Ninja

from shinobi_slurm.commands import CHECK_ACCOUNTING, SlurmCommands, SlurmError
from shinobi_slurm.poller import PollTuning, SacctPoller

DOWN = "sacct failed: Problem talking to the database: Connection refused"


class AccountingDown:
    """sacct fails; squeue lists the job as ``state`` (with ``-t all``); scontrol has
    the controller's record of it."""

    def __init__(self, state: str, scontrol: str = "") -> None:
        self.state, self.scontrol = state, scontrol
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def run(self, tool: str, args: Sequence[str], *, stdin: str | None = None) -> str:
        with self.lock:
            self.calls.append(tool)
        if tool == "sacct":
            raise SlurmError(DOWN, transient=True, check=CHECK_ACCOUNTING)
        if tool == "squeue" and "all" in args:
            return f"31|{self.state}|None|2026-12-03T10:28:12|2026-12-03T10:28:12|shinobi-R\n"
        if tool == "scontrol":
            return self.scontrol
        return ""


FAST = PollTuning(first=0.01, ceiling=0.05, growth=2.0, outage_limit=0.5, missing_limit=30.0)
SCONTROL = (
    "JobId=31 JobName=shinobi-R JobState=FAILED Reason=NonZeroExitCode ExitCode=7:0"
    " StartTime=2026-12-03T10:28:12 EndTime=2026-12-03T10:28:13"
)


def test_a_job_that_ended_during_the_outage_is_finished_from_the_controller() -> None:
    slurm = AccountingDown("FAILED", SCONTROL)
    watch = SacctPoller(cast(SlurmCommands, slurm), FAST).watch("31")
    assert watch.done.wait(10), "the wait never ended"
    assert watch.error is None, watch.error
    assert watch.record is not None
    assert (watch.record.state, watch.record.exit_code) == ("FAILED", 7)


def test_a_job_still_running_at_the_outage_limit_still_ends_the_wait_with_the_outage() -> None:
    watch = SacctPoller(cast(SlurmCommands, AccountingDown("RUNNING")), FAST).watch("31")
    assert watch.done.wait(10), "the wait never ended"
    assert watch.record is None and watch.error is not None and "lost contact" in watch.error


FAILING_SACCT = (
    '#!/bin/sh\necho "sacct: error: Problem talking to the database: Connection refused" >&2\n'
    "exit 1\n"
)


@pytest.mark.usefixtures("slurm")
def test_a_run_whose_job_completed_during_an_outage_succeeds(ninja: Ninja, tmp_path: Path) -> None:
    bin_dir = tmp_path / "shim"
    bin_dir.mkdir()
    (bin_dir / "sacct").write_text(FAILING_SACCT)
    (bin_dir / "sacct").chmod(0o755)
    (tmp_path / "g.py").write_text(
        "from pydantic import BaseModel\n"
        "from shinobi.steps import Cab, Recipe\n"
        "class N(BaseModel):\n    pass\n"
        "g = Recipe('g', N, N)\n"
        "g.add_step('p', Cab('p', ['/bin/sh', '-c', 'echo G=[hello]'], N, N))\n"
    )
    done = ninja(
        "run",
        "g.py:g",
        "--backend",
        "slurm",
        "--no-cache",
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        SHINOBI_BACKEND_SLURM_OUTAGE_LIMIT="8",
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "cancelled" not in said and "lost contact" not in said, said
