"""What each final Slurm state is reported as (the backend and ninja status share this)."""

from __future__ import annotations

import pytest

from shinobi_slurm.sacct import parse_line
from shinobi_slurm.states import classify, combine_tasks


def outcome(line: str):  # type: ignore[no-untyped-def]
    record = parse_line(line)
    assert record is not None
    return classify(record)


def test_completed() -> None:
    found = outcome("1|1|COMPLETED|0:0|s|e|None")
    assert (found.phase, found.returncode, found.message) == ("completed", 0, None)


def test_failed_with_exit_code() -> None:
    found = outcome("1|1|FAILED|3:0|s|e|None")
    assert (found.phase, found.returncode) == ("failed", 3)
    assert found.message == "exited with code 3"


def test_failed_by_signal_names_it() -> None:
    found = outcome("1|1|FAILED|0:15|s|e|None")
    assert (found.returncode, found.signal) == (-15, 15)
    assert found.message is not None and "SIGTERM" in found.message


def test_a_kill_of_a_job_with_a_memory_limit_says_it_is_likely_memory() -> None:
    """A container engine in the job kills its payload itself: Slurm sees SIGKILL,
    never OUT_OF_MEMORY, and the user never heard why."""
    from shinobi_slurm.states import Limits

    record = parse_line("1|1|FAILED|0:9|s|e|None")
    assert record is not None
    found = classify(record, Limits(memory="32M"))
    assert found.message is not None
    assert "likely out of memory: the job had 32M" in found.message
    assert "likely" not in (classify(record).message or "")  # no limit: no guess
    for other in ("0:15", "137:0"):  # another signal, or a tool's own exit 137
        record = parse_line(f"1|1|FAILED|{other}|s|e|None")
        assert record is not None and "memory" not in (
            classify(record, Limits("32M")).message or ""
        )


def test_out_of_memory_is_flagged() -> None:
    found = outcome("1|1|OUT_OF_MEMORY|0:125|s|e|None")
    assert found.phase == "failed" and found.oom and found.returncode != 0
    assert found.message is not None and "memory" in found.message


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ("TIMEOUT", "time limit"),
        ("NODE_FAIL", "node failed"),
        ("PREEMPTED", "preempted"),
        ("BOOT_FAIL", "boot"),
        ("DEADLINE", "deadline"),
    ],
)
def test_other_final_failures_say_what_happened(state: str, words: str) -> None:
    found = outcome(f"1|1|{state}|0:0|s|e|None")
    assert found.phase == "failed" and found.returncode != 0
    assert found.message is not None and words in found.message


def test_cancelled_because_a_dependency_failed() -> None:
    found = outcome("1|1|CANCELLED|0:0|2026-11-30T04:04:02|2026-11-30T04:04:02|Dependency")
    assert found.phase == "cancelled"
    assert found.message is not None and found.message.startswith("never ran")


def test_cancelled_by_a_user() -> None:
    found = outcome("1|1|CANCELLED by 0|0:0|2026-11-30T04:04:02|2026-11-30T04:04:09|None")
    assert found.phase == "cancelled"
    assert found.message is not None and "root" in found.message and "running" in found.message


def test_cancelled_by_a_user_while_still_pending_never_started() -> None:
    """Slurm sets Start = End for a job cancelled while pending, and keeps its reason."""
    line = "1|1|CANCELLED by 0|0:0|2026-11-30T04:04:02|2026-11-30T04:04:02|Dependency"
    found = outcome(line)
    assert found.message == "cancelled by root (uid 0) before it started"
    record = parse_line(line)
    assert record is not None and not record.started


def test_a_pending_job_has_not_started_whatever_start_time_slurm_expects() -> None:
    """`ninja status` showed Slurm's estimated start as a pending job's START."""
    record = parse_line("1|1|PENDING|0:0|2026-11-30T04:04:02|Unknown|Priority")
    assert record is not None and not record.started


def test_a_dependent_job_that_completed_within_a_second_did_start() -> None:
    """Slurm keeps Reason=Dependency on a completed dependent job."""
    record = parse_line("1|1|COMPLETED|0:0|2026-11-30T04:04:02|2026-11-30T04:04:02|Dependency")
    assert record is not None and record.started


def test_cancelled_by_a_user_in_the_second_it_started_still_ran() -> None:
    line = "1|1|CANCELLED by 0|0:0|2026-11-30T04:04:02|2026-11-30T04:04:02|None"
    found = outcome(line)
    assert found.message is not None and "while running" in found.message


def test_pending_says_what_it_waits_for() -> None:
    found = outcome("1|1|PENDING|0:0|Unknown|Unknown|Dependency")
    assert found.phase == "pending" and found.message == "waiting: Dependency"


def test_pending_for_a_reason_slurm_will_not_clear_names_the_fix() -> None:
    """`run --backend slurm` said how to release a held job; `ninja status` did not."""
    found = outcome("7|7|PENDING|0:0|Unknown|Unknown|JobHeldUser")
    assert found.message == "waiting: JobHeldUser: it is held: `scontrol release 7` lets it start"


def test_running() -> None:
    assert outcome("1|1|RUNNING|0:0|s|Unknown|None").phase == "running"


def records(*lines: str):  # type: ignore[no-untyped-def]
    found = [parse_line(line) for line in lines]
    assert all(r is not None for r in found)
    return found


def test_an_array_completes_only_when_every_task_did() -> None:
    done, counts = combine_tasks(
        records("9_0|9|COMPLETED|0:0|s|e|None", "9_1|10|COMPLETED|0:0|s|e|None"), 3
    )
    assert done.phase == "running" and counts == {"completed": 2, "unknown": 1}
    done, counts = combine_tasks(
        records(
            "9_0|9|COMPLETED|0:0|s|e|None",
            "9_1|10|COMPLETED|0:0|s|e|None",
            "9_2|11|COMPLETED|0:0|s|e|None",
        ),
        3,
    )
    assert done.phase == "completed" and counts == {"completed": 3}


def test_an_array_with_a_failed_task_names_the_first() -> None:
    found, counts = combine_tasks(
        records(
            "9_2|11|FAILED|4:0|s|e|None",
            "9_1|10|FAILED|2:0|s|e|None",
            "9_0|9|COMPLETED|0:0|s|e|None",
        ),
        3,
    )
    assert found.phase == "failed" and counts["failed"] == 2
    assert found.message is not None and found.message.startswith("task 1: exited with code 2")


def test_an_array_still_pending() -> None:
    found, counts = combine_tasks(records("9_[0-3]|9|PENDING|0:0|Unknown|Unknown|None"), 4)
    assert found.phase == "pending" and counts == {"pending": 4}


def test_an_array_cancelled_before_any_task_started_is_cancelled_not_pending() -> None:
    """sacct lists such an array as one record of the whole range (end-to-end walkthrough:
    the launch read 'running' for ever)."""
    found, counts = combine_tasks(
        records("9_[0-3]|9|CANCELLED by 0|0:0|2026-11-30T23:04:00|2026-11-30T23:04:00|Dependency"),
        4,
    )
    assert found.phase == "cancelled" and counts == {"cancelled": 4}


def test_an_array_with_a_failed_task_is_not_over_while_others_run() -> None:
    found, counts = combine_tasks(
        records("9_1|10|FAILED|2:0|s|e|None", "9_0|9|RUNNING|0:0|s|Unknown|None"), 2
    )
    assert found.phase == "running" and counts == {"failed": 1, "running": 1}
    assert found.message == "task 1: exited with code 2; 1 task(s) not finished"


def test_a_job_log_s_last_word_is_never_a_container_engine_s_banner(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from shinobi_slurm.status import _last_line

    log = tmp_path / "hog.err"
    log.write_text("bad input\nWARNING: IPv4 forwarding is disabled. Networking will not work.\n")
    assert _last_line(str(log)) == "bad input"


def test_a_job_log_s_last_word_is_the_engine_s_error_not_its_help_hint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A container that failed to start read "Run 'docker run --help' for more
    information": the image it could not find went unnamed."""
    from shinobi_slurm.status import _last_line

    log = tmp_path / "tamper.err"
    said = "docker: Error response from daemon: pull access denied for shinobi-test/nosuch."
    log.write_text(f"{said}\nRun 'docker run --help' for more information\n")
    assert _last_line(str(log)) == said


@pytest.mark.parametrize(
    ("nodes", "said"), [("None assigned", "before it started"), ("node1", "while running")]
)
def test_a_job_cancelled_by_hand_in_the_second_it_was_due_is_told_by_its_nodes(
    nodes: str, said: str
) -> None:
    """scancel of a job pending for no reason: Start = End and Reason None, as for a job
    cancelled in the second it started; it read "while running" with a START time."""
    line = (
        f"1|1|CANCELLED by 0|0:0|2026-11-30T04:04:02|2026-11-30T04:04:02|None|1G|00:10:00|{nodes}"
    )
    found = outcome(line)
    assert found.message == f"cancelled by root (uid 0) {said}"
    record = parse_line(line)
    assert record is not None and record.started == (said == "while running")


@pytest.mark.parametrize("contained", [False, True])
def test_a_sigkill_blames_a_container_engine_only_where_one_ran(contained: bool) -> None:
    """A compiled job without an image was told "a container engine in it kills what
    uses more"; there was none, and the SIGKILL was someone's kill -9."""
    from shinobi.launch.handle import LaunchJob
    from shinobi_slurm.status import _step_state

    line = "7|7|FAILED|0:9|2026-11-30T04:04:02|2026-11-30T04:04:09|None|96M|00:10:00|node1"
    record = parse_line(line)
    assert record is not None
    job = LaunchJob(step="k", job_id="7", details={"contained": True} if contained else {})
    state = _step_state(job, {"7": [record]}, None, old=False)
    assert state.detail is not None and state.detail.startswith("killed by SIGKILL (signal 9)")
    assert ("a container engine in it" in state.detail) == contained


def test_out_of_memory_under_a_configured_mem_says_to_raise_that() -> None:
    """'Declare more memory for the step' sent the user to a declaration --mem overrides."""
    from shinobi_slurm.sbatch import memory_option

    line = "7|7|OUT_OF_MEMORY|0:125|2026-11-30T04:04:02|2026-11-30T04:04:09|None|50M|00:10:00|n1"
    record = parse_line(line)
    assert record is not None
    said = classify(record, memory_configured=True).message or ""
    assert said.endswith(
        "raise --mem in [backend.slurm] sbatch_opts, which sets it for every"
        " job (a step's own declaration gives way to it)"
    )
    assert "resources=Resources" in (classify(record).message or "")
    assert memory_option({"sbatch_opts": ["--mem=50M"]}) is not None
    assert memory_option({"sbatch_opts": {"mem-per-cpu": "1G"}}) is not None
    assert memory_option({"sbatch_opts": ["--partition=debug"]}) is None
