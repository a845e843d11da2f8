"""A job that just ended is known only to the controller's queue until accounting
records it, and squeue says no exit code. The code the job script kept (a tool's
``exit 200``, see ``scripts._exit_kept``) was thrown away then, since it was
compared with the queue's missing one, and ``ninja status`` said "its exit code is
not known yet" for a launch that had ended (seen in the live suite under load)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from test_accounting_lag import Lagging

from shinobi.launch.handle import LaunchJob
from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.queue import query_queue
from shinobi_slurm.sacct import parse_line, with_exit
from shinobi_slurm.states import classify
from shinobi_slurm.status import _step_state


def _queue_failed():  # type: ignore[no-untyped-def]
    found, _ = query_queue(cast(SlurmCommands, Lagging()), ["22"])
    record = found["22"][0]
    assert record.from_queue and record.exit_code is None
    return record


def test_the_kept_code_of_a_job_only_the_queue_knows_is_taken() -> None:
    record = with_exit(_queue_failed(), 200)
    assert record.exit_code == 200
    assert classify(record).message == "exited with code 200"


def test_without_a_kept_code_the_queue_record_still_says_it_is_not_known() -> None:
    record = with_exit(_queue_failed(), None)
    assert record.exit_code is None
    assert "not known yet" in (classify(record).message or "")


def test_accountings_code_still_guards_against_another_runs_file() -> None:
    record = parse_line("1|1|FAILED|72:0|s|e|None")
    assert record is not None
    assert with_exit(record, 200).exit_code == 200  # 200 % 128 == 72: the same exit
    assert with_exit(record, 201).exit_code == 72  # another run's file: not taken


def test_a_tool_not_on_the_node_is_said_so_before_accounting_has_the_job(tmp_path: Path) -> None:
    # seen in CI under load: the status quoted the shell's line with "its exit code
    # is not known yet" where, a moment later, it gave the advice
    err = tmp_path / "m.err"
    err.write_text("/var/lib/slurm/slurmd/job22/slurm_script: line 9: mytool: command not found\n")
    job = LaunchJob("m", job_id="22", stderr=str(err))
    state = _step_state(job, {"22": [_queue_failed()]}, None, False)
    assert state.detail == (
        "command not found on the compute node: 'mytool' (is it installed on the nodes,"
        " and on their PATH?)"
    )
