"""``ninja status`` finds by name the jobs a stopped submitter never recorded.

sbatch answers before ninja records the job in ``submitted.jsonl``: a
submitter killed in between left a queued or running job that status called
"never submitted (the submitter stopped)". For a launch left submitting,
status now asks sacct once for every job of the launch's name and places
each by the script its submit line names; a round stays a constant number
of scheduler calls however many jobs and launches there are.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import RECIPES, Ninja
from launches import status, steps, submit

from shinobi.launch.handle import LaunchHandle, LaunchJob
from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.status import launch_statuses

LIMITS = "64M|01:00:00|None assigned|"


class Recording:
    """Stands in for :class:`SlurmCommands`: canned answers, every call kept."""

    def __init__(self, by_ids: str, by_name: str, queued: str = "") -> None:
        self.answers = {"-j": by_ids, "--name": by_name, "squeue": queued}
        self.calls: list[tuple[str, list[str]]] = []

    def run(self, tool: str, args: Sequence[str], *, stdin: str | None = None) -> str:
        self.calls.append((tool, list(args)))
        if tool != "sacct":
            return self.answers["squeue"] if "-n" in args else ""
        return self.answers["-j" if "-j" in args else "--name"]


def _launch(run_id: str, state: str = "submitting") -> LaunchHandle:
    scripts = f"/w/.shinobi/many/{run_id}/scripts"
    return LaunchHandle(
        engine="slurm",
        recipe="many",
        run_id=run_id,
        workdir="/w",
        state=state,  # type: ignore[arg-type]
        created=time.time(),
        jobs=[
            LaunchJob("s0", job_id="10", script=f"{scripts}/s0.sbatch"),
            LaunchJob("s1", job_id=None, script=f"{scripts}/s1.sbatch"),
            LaunchJob("s2", job_id=None, script=f"{scripts}/s2.sbatch"),
        ],
        extra={"job_name": f"shinobi-{run_id}"},
    )


def _statuses(handles: list[LaunchHandle], recording: Recording) -> list[Any]:
    return launch_statuses(cast(SlurmCommands, recording), handles)


BY_IDS = f"10|10|RUNNING|0:0|2026-12-03T03:00:00|Unknown|None|{LIMITS}|shinobi-R1\n"
BY_NAME = (
    f"10|10|RUNNING|0:0|2026-12-03T03:00:00|Unknown|None|{LIMITS}"
    "|sbatch --parsable /w/.shinobi/many/R1/scripts/s0.sbatch\n"
    f"11|11|PENDING|0:0|Unknown|Unknown|Priority|{LIMITS}"
    "|sbatch --parsable /w/.shinobi/many/R1/scripts/s1.sbatch\n"
)


def test_a_job_sbatch_took_but_the_submitter_never_recorded_is_shown_as_slurm_says() -> None:
    recording = Recording(BY_IDS, BY_NAME)
    (found,) = _statuses([_launch("R1")], recording)
    by_step = {s.step: s for s in found.steps}
    assert by_step["s1"].phase == "pending" and by_step["s1"].job_id == "11"
    assert by_step["s2"].phase == "cancelled"  # Slurm has no job of it: never submitted
    assert by_step["s2"].detail == "never submitted (the submitter stopped)"
    assert by_step["s0"].phase == "running"
    named = [args for tool, args in recording.calls if "--name" in " ".join(args)]
    assert named and "--name=shinobi-R1" in named[0] and "-S" in named[0]
    # every state: without one, sacct lists only jobs that became eligible, and a
    # job cancelled while it waited on a dependency never did
    states = named[0][named[0].index("-s") + 1].split(",")
    assert {"PD", "R", "CD", "CA", "F", "TO", "OOM", "NF"} <= set(states)
    assert named[0][named[0].index("-E") + 1] == "now"


def test_an_unrecorded_job_cancelled_while_it_waited_has_ended() -> None:
    """The queue's record of it was taken for a job still ending (no exit code
    from the queue), so the step read "running" until the controller forgot it."""
    queued = (
        "12|CANCELLED|Dependency|N/A|2026-12-03T03:01:00|/w/.shinobi/many/R1/scripts/s2.sbatch\n"
    )
    (found,) = _statuses([_launch("R1")], Recording(BY_IDS, BY_NAME, queued))
    by_step = {s.step: s for s in found.steps}
    assert (by_step["s2"].phase, by_step["s2"].job_id) == ("cancelled", "12")


def test_a_job_accounting_does_not_list_yet_is_found_in_the_queue() -> None:
    queued = "12|PENDING|JobHeldUser|N/A|N/A|/w/.shinobi/many/R1/scripts/s2.sbatch\n"
    recording = Recording(BY_IDS, BY_NAME, queued)
    (found,) = _statuses([_launch("R1")], recording)
    by_step = {s.step: s for s in found.steps}
    assert (by_step["s2"].phase, by_step["s2"].job_id) == ("pending", "12")
    assert by_step["s2"].detail is not None and "scontrol release" in by_step["s2"].detail
    assert by_step["s1"].job_id == "11"


def test_the_lookup_is_a_constant_number_of_calls_and_none_for_whole_launches() -> None:
    one, many = Recording(BY_IDS, BY_NAME), Recording(BY_IDS, BY_NAME)
    _statuses([_launch("R1")], one)
    _statuses([_launch(f"R{i}") for i in range(50)], many)
    tools = [tool for tool, _ in many.calls]
    # by ids, by name, the queue for what the submitter did not record, and the
    # queue again for why the pending ones wait: the same for 1 launch as for 50
    assert tools == [tool for tool, _ in one.calls] == ["sacct", "sacct", "squeue", "squeue"]
    recording = Recording(BY_IDS, BY_NAME)
    whole = _launch("R1", state="submitted")
    whole.jobs = whole.jobs[:1]
    _statuses([whole], recording)
    assert [tool for tool, _ in recording.calls] == ["sacct"]


def test_a_script_quoted_for_an_ssh_hop_is_placed_too() -> None:
    quoted = BY_NAME.replace(
        "/w/.shinobi/many/R1/scripts/s1.sbatch", "'/w/.shinobi/many/R1/scripts/s1.sbatch'"
    )
    (found,) = _statuses([_launch("R1")], Recording(BY_IDS, quoted))
    assert {s.step: s.job_id for s in found.steps}["s1"] == "11"


@pytest.mark.usefixtures("slurm")
def test_status_of_a_half_recorded_launch_finds_its_held_job(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "shinobi.toml").write_text('[backend.slurm]\nsbatch_opts = ["--hold"]\n')
    launch = submit(ninja, f"{RECIPES}/collide.py:col", cwd=tmp_path)
    try:
        path = tmp_path / ".shinobi" / "col" / launch["run_id"] / "handle.json"
        data = json.loads(path.read_text())
        data["state"] = "submitting"  # as a submitter killed before it recorded x.0
        lost = next(job for job in data["jobs"] if job["step"] == "x.0")
        job_id, lost["job_id"] = lost["job_id"], None
        path.write_text(json.dumps(data))
        journal = path.parent / "submitted.jsonl"
        kept = [line for line in journal.read_text().splitlines() if job_id not in line]
        journal.write_text("".join(f"{line}\n" for line in kept))  # its record of x.0 too
        found = steps(status(ninja, str(path), cwd=tmp_path))
        assert found["x.0"]["job_id"] == job_id, found["x.0"]
        assert found["x.0"]["phase"] == "pending", found["x.0"]
        ninja("cancel", launch["run_id"], cwd=tmp_path)
        # cancelled while it waited: ended, and still told by its id
        found = steps(status(ninja, str(path), cwd=tmp_path))
        assert (found["x.0"]["job_id"], found["x.0"]["phase"]) == (job_id, "cancelled"), found
    finally:
        ninja("cancel", launch["run_id"], cwd=tmp_path)
