"""A half-submitted launch read in a moved workspace still finds the jobs it lost.

``ninja status`` places the jobs a killed submitter never recorded by the
script their sbatch line names, a path of the workspace as it was. Read in a
moved (or copied) workspace the handle names its scripts where they are now,
so no job matched and each was "never submitted"; they are placed by the
script's path inside the launch (run id, scripts/, file), which a move keeps.
"""

from __future__ import annotations

from typing import cast

from test_unrecorded_jobs import BY_IDS, BY_NAME, Recording, _launch

from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.status import launch_statuses


def test_the_lost_jobs_of_a_moved_launch_are_found_by_their_script() -> None:
    moved = _launch("R1")
    moved.workdir = "/elsewhere/w"
    for job in moved.jobs:
        assert job.script is not None
        job.script = job.script.replace("/w/", "/elsewhere/w/", 1)
    (found,) = launch_statuses(cast(SlurmCommands, Recording(BY_IDS, BY_NAME)), [moved])
    by_step = {s.step: s for s in found.steps}
    assert (by_step["s1"].phase, by_step["s1"].job_id) == ("pending", "11")
    assert by_step["s2"].detail == "never submitted (the submitter stopped)"
