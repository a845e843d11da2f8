"""A job that ended while accounting had not heard of it is read from the controller.

With slurmdbd away while a job runs, sacct answers again without the job for
a while, and squeue lists only jobs that have not ended: the poller gave up
("Slurm has no record of job ...") and failed a step whose job had ended
normally. slurmctld keeps ended jobs for MinJobAge and is asked before that.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.poller import PollTuning, SacctPoller
from shinobi_slurm.sacct import controller_record

GAP = '#!/bin/sh\ntool="$1"; shift\n[ "$tool" = sacct ] && exit 0  # answers, without the job\nexec "$tool" "$@"\n'


@pytest.mark.usefixtures("slurm")
def test_a_job_accounting_never_listed_is_finished_from_the_controller(tmp_path: Path) -> None:
    wrapper = tmp_path / "gap"
    wrapper.write_text(GAP)
    wrapper.chmod(0o755)
    job = subprocess.run(
        ["sbatch", "--parsable", "-o", "/dev/null", "--wrap", "exit 3"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    commands = SlurmCommands((str(wrapper),))
    poller = SacctPoller(commands, PollTuning(first=0.2, ceiling=0.5, missing_limit=1.0))
    watch = poller.watch(job)
    assert watch.done.wait(60), "never finished"
    assert watch.error is None, watch.error
    assert watch.record is not None and watch.record.final
    assert (watch.record.state, watch.record.exit_code) == ("FAILED", 3)


@pytest.mark.usefixtures("slurm")
def test_the_controller_record_of_a_job_it_never_had_is_none() -> None:
    assert controller_record(SlurmCommands(), "999999999") is None
