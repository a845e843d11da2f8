"""Reading sacct's ``-P`` output: lines as real sacct 22.05 printed them on the testbed."""

from __future__ import annotations

from shinobi_slurm.sacct import parse_line, parse_sacct

REAL = """\
12|12|FAILED|3:0|2026-11-30T03:47:39|2026-11-30T03:47:39|None
13|13|CANCELLED|0:0|None|2026-11-30T03:47:39|Dependency
14|14|OUT_OF_MEMORY|0:125|2026-11-30T03:47:39|2026-11-30T03:47:39|None
15|15|FAILED|0:15|2026-11-30T03:47:39|2026-11-30T03:47:39|None
17|17|CANCELLED by 0|0:0|2026-11-30T03:47:39|2026-11-30T03:47:39|None
16_0|18|COMPLETED|0:0|2026-11-30T03:47:39|2026-11-30T03:47:41|None
16_2|16|COMPLETED|0:0|2026-11-30T03:47:39|2026-11-30T03:47:41|None
69_[1-3,7%2]|69|PENDING|0:0|Unknown|Unknown|Priority
"""


def test_every_real_line_is_read() -> None:
    records = parse_sacct(REAL)
    assert [r.job_id for r in records] == [
        "12",
        "13",
        "14",
        "15",
        "17",
        "16_0",
        "16_2",
        "69_[1-3,7%2]",
    ]


def test_exit_code_and_signal_are_split() -> None:
    failed = parse_line("12|12|FAILED|3:0|a|b|None")
    killed = parse_line("15|15|FAILED|0:15|a|b|None")
    assert failed is not None and (failed.exit_code, failed.exit_signal) == (3, 0)
    assert killed is not None and (killed.exit_code, killed.exit_signal) == (0, 15)


def test_cancelled_by_keeps_the_first_word_and_the_uid() -> None:
    record = parse_line("17|17|CANCELLED by 1500|0:0|a|b|None")
    assert record is not None
    assert record.state == "CANCELLED" and record.by == "1500"


def test_array_tasks_and_pending_ranges() -> None:
    task = parse_line("16_2|16|COMPLETED|0:0|a|b|None")
    pending = parse_line("69_[1-3,7%2]|69|PENDING|0:0|Unknown|Unknown|Priority")
    assert task is not None and (task.base, task.task) == ("16", 2)
    assert pending is not None and (pending.base, pending.task, pending.pending_tasks) == (
        "69",
        None,
        4,
    )


def test_unset_fields_are_none() -> None:
    record = parse_line("13|13|CANCELLED|0:0|None|2026-11-30T03:47:39|Dependency")
    assert record is not None and record.start is None and not record.started
    assert record.reason == "Dependency"


def test_a_record_is_final_only_with_its_end_time() -> None:
    ending = parse_line("5|5|COMPLETED|0:0|2026-11-30T03:49:26|Unknown|None")
    done = parse_line("5|5|COMPLETED|0:0|2026-11-30T03:49:26|2026-11-30T03:49:27|None")
    running = parse_line("5|5|RUNNING|0:0|2026-11-30T03:49:26|Unknown|None")
    assert ending is not None and not ending.final
    assert done is not None and done.final
    assert running is not None and not running.final


def test_lines_that_are_not_records_are_skipped() -> None:
    text = "sacct: warning: something\n\n12|12|FAILED|3:0|a|b|None\nnot|enough\n"
    assert [r.job_id for r in parse_sacct(text)] == ["12"]
