"""A job its script's output check failed, while only the queue knows it ended.

The job script checks a step's required outputs after its tool exits 0; a
missing one makes it say so (``shinobi: output "psf": the tool did not
create ...``) and exit 1. ``ninja status`` says "the tool exited 0, but
output ..." once accounting has the job's exit 1. In the seconds before
(the queue's record, which says no exit code) it said "failed; its exit code
is not known yet ...: shinobi: output ...", though the check's line is proof
of how the job ended (seen in the live suite on a busy CI machine).
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from test_accounting_lag import Lagging, T, _launch

from shinobi.launch.handle import LaunchJob
from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.status import launch_statuses

CHECK = 'shinobi: output "psf": the tool did not create /w/obs-psf.fits'


def _status_of(log: Path, queue: str) -> tuple[str, str | None]:
    handle = _launch()
    handle.jobs = [LaunchJob("image", job_id="22", stderr=str(log))]
    (found,) = launch_statuses(cast(SlurmCommands, Lagging(queue)), [handle])
    return found.steps[0].phase, found.steps[0].detail


def test_the_output_check_is_said_while_accounting_has_not_the_job(tmp_path: Path) -> None:
    log = tmp_path / "image.err"
    log.write_text(f"imaging...\n{CHECK}\n")
    queue = f"22|FAILED|NonZeroExitCode|{T}4|{T}4|shinobi-R\n"

    assert _status_of(log, queue) == (
        "failed",
        'the tool exited 0, but output "psf": the tool did not create /w/obs-psf.fits',
    )


@pytest.mark.parametrize(
    ("last", "said"),
    [
        ("Segmentation fault in gridder", "Segmentation fault in gridder"),
        ("", None),
    ],
    ids=["the tool's own last line", "a silent job"],
)
def test_any_other_failure_the_queue_knows_still_says_its_code_is_not_known(
    tmp_path: Path, last: str, said: str | None
) -> None:
    log = tmp_path / "image.err"
    log.write_text(f"{last}\n")
    queue = f"22|FAILED|NonZeroExitCode|{T}4|{T}4|shinobi-R\n"

    phase, detail = _status_of(log, queue)

    assert phase == "failed"
    assert detail is not None and detail.startswith("failed; its exit code is not known yet")
    assert detail.endswith(f": {said}") if said else detail.endswith("squeue does not say)")
