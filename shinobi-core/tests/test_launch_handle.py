"""Handle files: written atomically, read back whole, merged with the journal of a killed submitter."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from shinobi.errors import UsageError
from shinobi.launch import handle as handle_module
from shinobi.launch.handle import (
    JobJournal,
    LaunchHandle,
    LaunchJob,
    atomic_write,
    read_handle,
    write_handle,
)


def make(tmp_path: Path, run_id: str = "20260101-000000-abcdef", **extra: object) -> LaunchHandle:
    return LaunchHandle(
        engine="slurm",
        recipe="pipe",
        run_id=run_id,
        workdir=str(tmp_path),
        jobs=[
            LaunchJob("make", "11", stdout="/x/make.out"),
            LaunchJob("use", "12", after=["make"]),
        ],
        **extra,  # type: ignore[arg-type]
    )


def test_a_handle_is_written_for_the_run_and_as_the_recipes_latest(tmp_path: Path) -> None:
    handle = make(tmp_path)
    own = write_handle(handle)
    latest = tmp_path / ".shinobi" / "pipe" / "handle.json"
    assert own == tmp_path / ".shinobi" / "pipe" / "20260101-000000-abcdef" / "handle.json"
    assert own.read_text() == latest.read_text()
    back = read_handle(latest)
    assert back.to_json() == handle.to_json()
    assert [j.job_id for j in back.jobs] == ["11", "12"] and back.jobs[1].after == ["make"]
    assert sorted(p.name for p in own.parent.iterdir()) == ["handle.json"]


def test_a_launch_still_submitting_does_not_replace_the_latest(tmp_path: Path) -> None:
    write_handle(make(tmp_path))
    newer = make(tmp_path, run_id="20260202-000000-000000", state="submitting")
    write_handle(newer, latest=False)
    latest = json.loads((tmp_path / ".shinobi" / "pipe" / "handle.json").read_text())
    assert latest["run_id"] == "20260101-000000-abcdef"


def test_a_failed_write_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "handle.json"
    target.write_text("old")

    def broken(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(handle_module.os, "replace", broken)
    with pytest.raises(OSError):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["handle.json"]


def test_the_journal_fills_in_what_a_killed_submitter_handed_over(tmp_path: Path) -> None:
    handle = make(tmp_path, state="submitting")
    for job in handle.jobs:
        job.job_id = None
    path = write_handle(handle, latest=False)
    journal = JobJournal(handle)
    journal.record(LaunchJob("make", "31"))
    journal.close()
    with open(journal.path, "a") as torn:
        torn.write('{"step": "use", "job_')  # the line being written when it died
    back = read_handle(path)
    assert [j.job_id for j in back.jobs] == ["31", None]


def test_a_launch_becomes_the_latest_once_its_first_job_is_accepted(tmp_path: Path) -> None:
    """A submitter killed after handing over jobs left the latest handle naming the
    launch before, while the recipe's name found the new one (a later audit)."""
    write_handle(make(tmp_path))
    newer = make(tmp_path, run_id="20260202-000000-000000", state="submitting")
    for job in newer.jobs:
        job.job_id = None
    write_handle(newer, latest=False)
    latest = tmp_path / ".shinobi" / "pipe" / "handle.json"
    journal = JobJournal(newer)
    assert read_handle(latest).run_id == "20260101-000000-abcdef"  # nothing accepted yet
    journal.record(LaunchJob("make", "41"))
    journal.close()  # and the submitter dies here
    back = read_handle(latest)
    assert back.run_id == "20260202-000000-000000" and back.state == "submitting"
    assert [j.job_id for j in back.jobs] == ["41", None]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "damaged"),
        (json.dumps({"version": 99}), "not a shinobi launch handle"),
        (json.dumps({"version": 1, "engine": "slurm"}), "not a shinobi launch handle"),
    ],
)
def test_a_bad_handle_is_a_one_line_error(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "handle.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=words) as caught:
        read_handle(path)
    assert "\n" not in str(caught.value)


def test_a_missing_handle_says_where_to_look(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="ninja runs"):
        read_handle(tmp_path / "nope.json")


def test_a_recipe_called_runs_keeps_its_launches_out_of_the_local_runs(tmp_path: Path) -> None:
    from shinobi.launch.handle import launch_dir
    from shinobi.local_runs import runs_root

    assert launch_dir(tmp_path, "runs") != runs_root(tmp_path)
    assert launch_dir(tmp_path, "runs").parent == tmp_path / ".shinobi"
    assert launch_dir(tmp_path, "pipe") == tmp_path / ".shinobi" / "pipe"


def test_the_submitter_is_told_from_a_stopped_one_and_a_reused_pid(tmp_path: Path) -> None:
    """``ninja cancel`` and ``ninja status`` took every handle left submitting for one
    whose submitter had stopped: one still at work went on submitting."""
    import subprocess
    import time

    from shinobi.host_name import this_host
    from shinobi.launch.submitter import submitter_running

    handle = make(tmp_path, state="submitting")
    path = write_handle(handle, latest=False)
    back = read_handle(path)
    assert back.submitted_by == {"host": this_host(), "pid": os.getpid()}  # kept as written
    assert submitter_running(back) == os.getpid()
    back.state = "submitted"
    assert submitter_running(back) is None  # done
    back.state = "submitting"
    back.submitted_by = {"host": "elsewhere", "pid": os.getpid()}
    assert submitter_running(back) is None  # not this host's to ask
    later = subprocess.Popen(["sleep", "30"])
    try:  # a process started after the launch was made holds a reused pid
        back.submitted_by = {"host": this_host(), "pid": later.pid}
        back.created = time.time() - 60
        assert submitter_running(back) is None
    finally:
        later.kill()
        later.wait()
    back.submitted_by = {"host": this_host(), "pid": later.pid}  # gone
    assert submitter_running(back) is None


def test_the_journal_stops_the_submitter_once_a_cancel_asks(tmp_path: Path) -> None:
    from shinobi.launch.submitter import LaunchCancelled, request_cancel

    handle = make(tmp_path, state="submitting")
    for job in handle.jobs:
        job.job_id = None
    write_handle(handle, latest=False)
    journal = JobJournal(handle)
    journal.record(LaunchJob("make", "31"))
    request_cancel(handle)
    with pytest.raises(LaunchCancelled, match=re.escape("cancelled (`ninja cancel`) while")):
        journal.record(LaunchJob("use", "32"))  # on record first: the cancel reaches it
    journal.close()
    assert [j.job_id for j in read_handle(handle.run_dir / "handle.json").jobs] == ["31", "32"]


def test_a_launch_of_a_recipe_named_with_a_leading_dot_is_found(tmp_path: Path) -> None:
    """Its folder ``.shinobi/.slow`` was skipped by every scan of the workspace: a
    ``ninja run`` writing its paths was not warned, ``ninja status .`` said no launch."""
    from shinobi.launch.folders import handle_paths, unended

    handle = make(tmp_path)
    handle.recipe = ".slow"
    path = write_handle(handle, latest=False)
    assert handle_paths(tmp_path / ".shinobi") == [path]
    assert unended(tmp_path) == [path]


def test_a_handle_the_disk_will_not_take_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk met in the write said "No space left on device (free some space
    there)" of no path: on a cluster of quotas, which file system?"""
    import errno

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    handle = make(tmp_path)
    with pytest.raises(OSError) as info:
        write_handle(handle, latest=False)
    assert info.value.errno == errno.ENOSPC
    assert info.value.filename == str(handle.run_dir / "handle.json")
