"""Kernel out-of-memory records, and attributing them to one run."""

from __future__ import annotations

import os
from pathlib import Path

from shinobi_containers.oom import KernelLog, SoleRun, parse_oom_kill

RECORD = (
    "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=12358,mems_allowed=0,"
    "oom_memcg=/apptainer/12358,task_memcg=/apptainer/12358,task=tail,pid=12378,uid=1500"
)


def test_a_kill_record_names_the_cgroup_the_victim_and_its_owner() -> None:
    kill = parse_oom_kill(RECORD)
    assert kill is not None
    assert (kill.memcg, kill.task, kill.pid, kill.uid) == ("/apptainer/12358", "tail", 12378, 1500)


def test_other_kernel_messages_are_not_kills() -> None:
    assert parse_oom_kill("Memory cgroup out of memory: Killed process 1 (tail)") is None
    assert parse_oom_kill("oom-kill:constraint=CONSTRAINT_NONE") is None


def test_an_unreadable_log_reports_nothing(tmp_path: Path) -> None:
    log = KernelLog(str(tmp_path / "no-such-kmsg"))
    assert not log.readable and log.oom_kills() == []


def test_the_log_reads_only_what_came_after_it_was_opened(tmp_path: Path) -> None:
    path = tmp_path / "fake-kmsg"
    path.write_text(f"6,1,1,-;{RECORD}\n")
    log = KernelLog(str(path))
    with open(path, "a") as fh:
        fh.write("6,2,2,-;" + RECORD.replace("12378", "99") + "\n")
    kills = log.oom_kills()
    assert [k.pid for k in kills] == [99]
    assert os.path.exists(path)


def test_a_run_alone_is_sole() -> None:
    assert SoleRun("t-alone").finish()


def test_overlapping_runs_are_not_sole_either_way() -> None:
    first = SoleRun("t-overlap")
    second = SoleRun("t-overlap")
    assert not second.finish()
    assert not first.finish()
    assert SoleRun("t-overlap").finish()


def test_runs_of_other_kinds_do_not_overlap() -> None:
    first = SoleRun("t-a")
    assert SoleRun("t-b").finish() and first.finish()
