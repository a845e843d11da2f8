"""A job array whose tasks failed differently names the one that ran out of memory.

Only the first failed task was named: task 1 "exited with code 7 (2 of 3
tasks failed)" while task 2 had been stopped for memory, and neither the text
nor ``--json`` said so or how to fix it. The out-of-memory task is now named,
with the memory hint, after the first failure (and what it printed).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Ninja
from launches import steps, submit, wait_final

from shinobi.launch.handle import LaunchJob
from shinobi_slurm.sacct import parse_line
from shinobi_slurm.states import combine_tasks
from shinobi_slurm.status import _step_state


def _task(task: int, state: str, exit_text: str) -> str:
    return f"9_{task}|9{task}|{state}|{exit_text}|2026-12-02T10:00:00|2026-12-02T10:00:05|None|64M|01:00:00|n1|cpu=1,mem=64M,node=1"


def _records() -> list:
    lines = [
        _task(0, "COMPLETED", "0:0"),
        _task(1, "FAILED", "7:0"),
        _task(2, "OUT_OF_MEMORY", "0:125"),
    ]
    return [r for line in lines if (r := parse_line(line)) is not None]


def test_the_out_of_memory_task_is_named_with_its_hint() -> None:
    outcome, counts = combine_tasks(_records(), 3)
    assert counts == {"completed": 1, "failed": 2}
    assert outcome.message == "task 1: exited with code 7 (2 of 3 tasks failed)"
    assert outcome.also is not None and outcome.also.startswith("task 2: out of memory:")
    assert "its 64M of memory" in outcome.also and "Resources(memory=...)" in outcome.also
    assert outcome.oom


def test_status_says_it_after_what_the_first_failed_task_printed(tmp_path: Path) -> None:
    (tmp_path / "err.1").write_text("sev: bad input\n")
    job = LaunchJob("convert", job_id="9", stderr=str(tmp_path / "err.%a"), tasks=3)
    state = _step_state(job, {"9": _records()}, None, False)
    assert state.detail is not None
    assert state.detail.startswith(
        "task 1: exited with code 7 (2 of 3 tasks failed): sev: bad input; task 2: out of memory:"
    ), state.detail


def test_each_task_that_started_and_went_wrong_is_listed_with_its_times() -> None:
    """What ``ninja status`` judges each failed slice's outputs by (and ``--json``
    lists, for a script to know which slices to run again)."""
    job = LaunchJob("convert", job_id="9", tasks=3)
    state = _step_state(job, {"9": _records()}, None, False)
    assert [(t.task, t.phase) for t in state.unfinished_tasks] == [(1, "failed"), (2, "failed")]
    assert state.unfinished_tasks[0].started == "2026-12-02T10:00:00"
    assert state.unfinished_tasks[0].finished == "2026-12-02T10:00:05"
    assert state.to_json()["unfinished_tasks"][1] == {
        "task": 2,
        "phase": "failed",
        "started": "2026-12-02T10:00:00",
        "finished": "2026-12-02T10:00:05",
    }


def test_a_plain_job_lists_no_tasks() -> None:
    record = parse_line(_task(0, "FAILED", "7:0").replace("9_0|90|", "9|9|"))
    state = _step_state(LaunchJob("convert", job_id="9"), {"9": [record]}, None, False)
    assert state.phase == "failed" and state.to_json()["unfinished_tasks"] is None


RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.resources import Resources
from shinobi.steps import Cab, InputRef, ParamMeta, Recipe, StepRef

class In(BaseModel):
    sources: list[Path]

class One(BaseModel):
    src: Path

work = Cab(
    name="work",
    command=["/bin/sh", "-c",
             'case "$1" in *b) echo "sev: bad input" >&2; exit 7;;'
             ' *c) head -c 400000000 /dev/zero | tail > /dev/null;; esac', "work"],
    inputs_model=One,
    field_meta={"src": ParamMeta(positional=True)},
)
fan = Recipe(
    name="fan",
    inputs_model=In,
    steps=[StepRef("work", work, {"src": InputRef("sources")}, scatter=("src",),
                   resources=Resources(memory="64MiB"))],
)
"""


@pytest.mark.usefixtures("slurm")
def test_a_live_array_with_an_out_of_memory_task(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "fan.py").write_text(RECIPE)
    sources = [a for name in ("a", "b", "c") for a in ("--sources", name)]
    launch = submit(ninja, f"{tmp_path}/fan.py:fan", *sources)
    found = wait_final(ninja, launch["handle"])
    work = steps(found)["work"]
    assert work["tasks"] == {"completed": 1, "failed": 2}
    assert work["detail"].startswith("task 1: exited with code 7"), work["detail"]
    assert "task 2: out of memory: Slurm stopped it" in work["detail"], work["detail"]
    text = ninja("status", launch["handle"]).stdout
    assert "task 2: out of memory" in text, text


def test_an_array_cancelled_before_any_task_began_is_cancelled_whole() -> None:
    # Slurm 22.05 records a pending array cancelled as a whole in one bare line:
    # read as one task, the others stayed unknown and the launch read running for ever
    bare = "9|9|CANCELLED by 0|0:0|None|2026-12-02T10:00:05|None|64M|01:00:00|None assigned|"
    records = [r for r in [parse_line(bare)] if r is not None]
    outcome, counts = combine_tasks(records, 3)
    assert counts == {"cancelled": 3}
    assert outcome.phase == "cancelled"


def test_an_array_that_just_ended_read_alone_is_not_taken_for_all_its_tasks() -> None:
    # for a moment after an array ends accounting lists it as one bare line: its
    # tasks' own lines come after, and until then the array is not over
    bare = "9|9|FAILED|3:0|2026-12-02T10:00:00|2026-12-02T10:00:05|None|64M|01:00:00|n1|"
    records = [r for r in [parse_line(bare)] if r is not None]
    outcome, counts = combine_tasks(records, 2)
    assert counts == {"failed": 1, "unknown": 1}
    assert outcome.phase == "running"
