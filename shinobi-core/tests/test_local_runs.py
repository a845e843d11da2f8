"""The run folders of ``ninja run``: listed by ``ninja runs``, read by ``ninja logs``,
removed by ``ninja clean --runs`` but never while their run goes on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from shinobi.local_runs import find_local_run, hold_run, is_running, local_runs, release_run

RECIPE = """
from shinobi.steps import Cab, Recipe
talk = Recipe("talk")
talk.add_step("say", Cab("say", ["/bin/sh", "-c", "echo hello; echo oops >&2"]))
talk.add_step("quiet", Cab("quiet", ["/bin/true"]))
ordered = Recipe("ordered")  # names sort the other way round from the run
ordered.add_step("zeta", Cab("zeta", ["/bin/sh", "-c", "echo first; sleep 0.05"]))
ordered.add_step("alpha", Cab("alpha", ["/bin/echo", "second"]))  # one worker: after zeta
nap = Recipe("nap")
nap.add_step("nap", Cab("nap", ["/bin/sh", "-c", "echo start; sleep 30"]))
hush = Recipe("hush")
hush.add_step("hush", Cab("hush", ["/bin/sleep", "1.5"]))

from pydantic import BaseModel
from shinobi.steps import ParamMeta

class Word(BaseModel):
    word: str

class Words(BaseModel):
    words: list[str] = ["a", "b"]

fan = Recipe("fan", Words)
echo = Cab("echo", ["/bin/echo"], Word, field_meta={"word": ParamMeta(positional=True)})
fan.add_step("say", echo, scatter="word", word=fan.inputs.words)

odd = Recipe("odd")  # two names that make the same file name safe only with a hash
odd.add_step("cal ms", Cab("cal", ["/bin/echo", "spaced"]))
odd.add_step("cal:ms", Cab("cal2", ["/bin/echo", "coloned"]))

twice = Recipe("twice")  # the second step is served by the first's result
twice.add_step("first", Cab("say", ["/bin/echo", "said once"]))
twice.add_step("again", Cab("say", ["/bin/echo", "said once"]))

broken = Recipe("broken")
broken.add_step("first step", Cab("first", ["/bin/sh", "-c", "echo one; echo two >&2; exit 3"]))
broken.add_step("after", Cab("after", ["/bin/echo", "never"]))  # one worker: never starts

class Letters(BaseModel):
    words: list[str] = ["a", "b", "c", "d", "e", "f"]

halted = Recipe("halted", Letters)  # one worker: slice[2] fails, slices 3 to 5 never start
check = Cab("check", ["/bin/sh", "-c", 'echo "$0"; [ "$0" != c ]'], Word,
            field_meta={"word": ParamMeta(positional=True)})
halted.add_step("each", check, scatter="word", word=halted.inputs.words)

mute_failure = Recipe("mute_failure")
mute_failure.add_step("mute", Cab("mute", ["/bin/false"]))
mute_failure.add_step("after", Cab("after", ["/bin/echo", "never"]))
"""

NINJA = str(Path(sys.executable).parent / "ninja")


def ninja(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NINJA, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "recipe.py").write_text(RECIPE)
    return tmp_path


def _running_in_background(project: Path, target: str) -> subprocess.Popen[bytes]:
    """``ninja run TARGET`` started in ``project``, once its run is under way."""
    going = subprocess.Popen(
        [NINJA, "run", target, "--no-cache"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while not [r for r in local_runs(project) if r.running]:
        if time.monotonic() > deadline:
            going.kill()
            pytest.fail(f"the run of {target} never started")
        time.sleep(0.05)
    return going


def test_a_held_run_is_running_until_released(tmp_path: Path) -> None:
    run_dir = tmp_path / ".shinobi" / "runs" / "20260101-000000-abcdef"
    run_dir.mkdir(parents=True)
    held = hold_run(run_dir, "pipe")
    assert is_running(run_dir)
    (found,) = local_runs(tmp_path)
    assert (found.run_id, found.recipe, found.state) == (run_dir.name, "pipe", "running")
    release_run(held)
    assert not is_running(run_dir)
    again = find_local_run(tmp_path, "20260101")  # a unique start of the id will do
    assert again is not None and again.run_id == run_dir.name and again.state == "finished"


def test_logs_of_a_whole_run_come_in_the_order_the_steps_ran(project: Path) -> None:
    assert ninja(project, "run", "recipe.py:ordered", "--no-cache").returncode == 0
    (run,) = json.loads(ninja(project, "runs", "--json").stdout)["runs"]
    said = ninja(project, "logs", run["run_id"])
    assert said.stdout == "==> zeta stdout <==\nfirst\n==> alpha stdout <==\nsecond\n"


def test_logs_are_titled_by_step_name_and_a_step_that_never_ran_is_said_so(
    project: Path,
) -> None:
    # the manifest (--provenance) names the steps; without one, a log is titled by its file
    assert ninja(project, "run", "recipe.py:broken", "--no-cache", "--provenance").returncode == 1
    (run,) = json.loads(ninja(project, "runs", "--json").stdout)["runs"]
    said = ninja(project, "logs", run["run_id"])
    assert said.stdout == "==> first step stdout <==\none\n==> first step stderr <==\ntwo\n"
    never = ninja(project, "logs", run["run_id"], "after")
    assert never.returncode == 2
    assert "step 'after' of run" in never.stderr and "did not run, so" in never.stderr


def test_without_a_manifest_logs_still_tell_a_step_that_never_ran(project: Path) -> None:
    # the run's record keeps how its steps that did not end ok ended
    assert ninja(project, "run", "recipe.py:mute_failure", "--no-cache").returncode == 1
    (run,) = json.loads(ninja(project, "runs", "--json").stdout)["runs"]
    never = ninja(project, "logs", run["run_id"], "after")
    assert never.returncode == 2
    assert f"step 'after' of run {run['run_id']} did not run, so it printed nothing" in (
        never.stderr
    )
    silent = ninja(project, "logs", run["run_id"], "mute")
    assert silent.returncode == 2
    assert "step 'mute' of run" in silent.stderr
    assert "printed nothing, so it kept no logs (it ended failed)" in silent.stderr


@pytest.mark.slow
def test_runs_lists_and_logs_reads_a_local_run(project: Path) -> None:
    assert ninja(project, "run", "recipe.py:talk", "--no-cache").returncode == 0
    listed = json.loads(ninja(project, "runs", "--json").stdout)
    (run,) = listed["runs"]
    assert run["recipe"] == "talk" and run["state"] == "ok"
    said = ninja(project, "logs", run["run_id"])
    assert said.returncode == 0
    assert said.stdout == "==> say stdout <==\nhello\n==> say stderr <==\noops\n"
    assert ninja(project, "logs", run["run_id"][:-3], "say", "--stream", "stdout").stdout == (
        "hello\n"
    )
    silent = ninja(project, "logs", run["run_id"], "quiet")
    assert silent.returncode == 2 and "kept no logs" in silent.stderr


@pytest.mark.slow
def test_clean_runs_keeps_a_run_in_progress_and_recent_ones_when_asked(project: Path) -> None:
    assert ninja(project, "run", "recipe.py:talk", "--no-cache").returncode == 0
    going = _running_in_background(project, "recipe.py:nap")
    try:
        runs = project / ".shinobi" / "runs"
        kept = ninja(project, "clean", "--runs", "--older-than", "1d")  # as cache prune reads it
        assert kept.returncode == 0
        assert "removed 0 run folder(s)" in kept.stdout
        assert "kept 1 touched in the last 1d" in kept.stdout
        bare = ninja(project, "clean", "--runs", "--older-than", "1")  # a bare number is days
        assert "kept 1 touched in the last 1 day(s)" in bare.stdout
        cleaned = ninja(project, "clean", "--runs")
        assert cleaned.returncode == 0 and "removed 1 run folder(s)" in cleaned.stdout
        assert "is still running" in cleaned.stderr
        (left,) = os.listdir(runs)
        assert find_local_run(project, left) is not None
    finally:
        going.terminate()
        going.wait(timeout=30)


@pytest.mark.slow
def test_logs_finds_a_scattered_steps_slices_a_recipes_latest_run_and_names_ambiguity(
    project: Path,
) -> None:
    for _ in range(2):
        assert ninja(project, "run", "recipe.py:fan", "--no-cache").returncode == 0
    latest = sorted(r.run_id for r in local_runs(project))[-1]
    said = ninja(project, "logs", "fan", "say")  # the recipe's latest run, every slice
    assert said.returncode == 0, said.stderr
    assert said.stdout == "==> say[0] stdout <==\na\n==> say[1] stdout <==\nb\n"
    assert ninja(project, "logs", latest, "say[1]").stdout == "b\n"
    ambiguous = ninja(project, "logs", latest[:4])
    assert ambiguous.returncode == 2 and "matches 2 runs" in ambiguous.stderr


def test_a_run_whose_manifest_says_running_but_holds_no_lock_ended_abruptly(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / ".shinobi" / "runs" / "20260101-000000-abcdef"
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text('{"recipe": {"name": "r"}, "status": "running"}')
    (found,) = local_runs(tmp_path)  # killed with SIGKILL: the kernel dropped its lock
    assert found.state == "ended abruptly (killed?)" and found.recipe == "r"


def test_clean_runs_removes_a_linked_run_folders_link_and_not_what_it_points_to(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("bigdisk") / "20260101-000000-abcdef"
    (elsewhere / "logs").mkdir(parents=True)
    (elsewhere / "logs" / "say.out").write_text("precious\n")
    (elsewhere / ".running").write_text(json.dumps({"ended": True, "status": "ok"}))
    runs = project / ".shinobi" / "runs"
    runs.mkdir(parents=True)
    (runs / elsewhere.name).symlink_to(elsewhere)
    cleaned = ninja(project, "clean", "--runs")
    assert cleaned.returncode == 0, cleaned.stderr
    assert "removed 1 run folder(s)" in cleaned.stdout
    assert (
        "was a link" in cleaned.stderr and "left the folder it pointed to alone" in cleaned.stderr
    )
    assert not (runs / elsewhere.name).exists()
    assert (elsewhere / "logs" / "say.out").read_text() == "precious\n"


def test_a_run_folder_that_cannot_be_removed_whole_is_said_not_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from shinobi.local_runs import remove_run

    run_dir = tmp_path / ".shinobi" / "runs" / "20260101-000000-abcdef"
    (run_dir / "logs").mkdir(parents=True)
    (run_dir / "logs" / "s.out").write_text("x")

    def refuse(path: str, onerror: Any) -> None:
        onerror(
            os.unlink,
            os.path.join(path, "logs", "s.out"),
            (PermissionError, PermissionError(13, "Permission denied"), None),
        )

    monkeypatch.setattr(shutil, "rmtree", refuse)
    (run,) = local_runs(tmp_path)
    with pytest.raises(OSError, match=r"cannot remove .*s\.out: Permission denied"):
        remove_run(run)


def test_runs_started_within_one_second_are_in_the_order_they_started(tmp_path: Path) -> None:
    runs = tmp_path / ".shinobi" / "runs"
    # ids share their second; their random parts sort the other way round
    for name in ("20261130-120000-ffffff", "20261130-120000-000000"):
        (runs / name).mkdir(parents=True)
        release_run(hold_run(runs / name, "pipe"), "ok")
        time.sleep(0.01)
    assert [r.run_id for r in local_runs(tmp_path)] == [
        "20261130-120000-ffffff",
        "20261130-120000-000000",
    ]
    latest = find_local_run(tmp_path, "pipe", by_recipe=True)
    assert latest is not None and latest.run_id == "20261130-120000-000000"


def test_runs_are_in_the_order_they_started_whatever_time_zone_named_them(
    tmp_path: Path,
) -> None:
    """A run id begins with the local time of the ninja that made it: a run under
    TZ=Asia/Tokyo, then one under TZ=UTC a second later, were listed the other
    way round, and `ninja logs pipe` showed the older run as the latest."""
    runs = tmp_path / ".shinobi" / "runs"
    now = time.time()
    for run_id, started in (("20260101-090000-aaaaaa", now), ("20260101-000001-bbbbbb", now + 1)):
        (runs / run_id).mkdir(parents=True)
        (runs / run_id / ".running").write_text(
            json.dumps(
                {"recipe": "pipe", "pid": 1, "started": started, "ended": True, "status": "ok"}
            )
        )
    assert [r.run_id for r in local_runs(tmp_path)] == [
        "20260101-090000-aaaaaa",
        "20260101-000001-bbbbbb",
    ]


def test_a_released_run_says_how_it_ended(tmp_path: Path) -> None:
    runs = tmp_path / ".shinobi" / "runs"
    for run_id, status in (("20260101-000000-aaaaaa", "failed"), ("20260101-000001-bbbbbb", "ok")):
        (runs / run_id).mkdir(parents=True)
        release_run(hold_run(runs / run_id, "pipe"), status)
    (runs / "20260101-000002-cccccc").mkdir()  # its manifest's final word comes first
    release_run(hold_run(runs / "20260101-000002-cccccc", "pipe"), "crashed")
    (runs / "20260101-000002-cccccc" / "manifest.json").write_text(
        '{"recipe": {"name": "pipe"}, "status": "interrupted"}'
    )
    assert [(r.recipe, r.state) for r in local_runs(tmp_path)] == [
        ("pipe", "failed"),
        ("pipe", "ok"),
        ("pipe", "interrupted"),
    ]


def test_a_runs_last_activity_is_when_it_ended(tmp_path: Path) -> None:
    """A quiet run's end rewrites its record in place, which moves only the record's
    time: `ninja runs` (and `clean --older-than`) took its start for its last activity."""
    run_dir = tmp_path / ".shinobi" / "runs" / "20260101-000000-aaaaaa"
    (run_dir / "logs").mkdir(parents=True)
    held = hold_run(run_dir, "pipe")
    long_ago = time.time() - 3600
    for path in (run_dir, run_dir / "logs", run_dir / ".running"):
        os.utime(path, (long_ago, long_ago))
    release_run(held, "ok")
    (run,) = local_runs(tmp_path)
    assert time.time() - run.modified < 60


def test_a_killed_runs_last_activity_counts_what_its_tool_still_writes(tmp_path: Path) -> None:
    """Appending to a log moves only the log's time: a killed run whose tool wrote
    on looked idle since it started, and `clean --runs` removed it an hour later."""
    killed = tmp_path / ".shinobi" / "runs" / "20260101-000000-aaaaaa"
    (killed / "logs").mkdir(parents=True)
    (killed / ".running").write_text('{"recipe": "pipe", "pid": 1}')
    (killed / "logs" / "a.out").write_text("tick\n")
    long_ago = time.time() - 7200
    for path in (killed, killed / "logs", killed / ".running"):
        os.utime(path, (long_ago, long_ago))
    (run,) = local_runs(tmp_path)
    assert time.time() - run.modified < 60


def test_a_run_that_holds_no_lock_and_never_said_how_it_ended_ended_abruptly(
    tmp_path: Path,
) -> None:
    from shinobi.local_runs import ENDED_ABRUPTLY

    runs = tmp_path / ".shinobi" / "runs"
    killed = runs / "20260101-000000-aaaaaa"  # its lock as hold_run left it: never released
    killed.mkdir(parents=True)
    (killed / ".running").write_text('{"recipe": "pipe", "pid": 1}')
    stale = runs / "20260101-000001-bbbbbb"  # a manifest that never got to its end...
    stale.mkdir()
    (stale / "manifest.json").write_text('{"recipe": {"name": "r"}, "status": "running"}')
    (stale / ".running").write_text('{"recipe": "r", "pid": 1, "ended": true, "status": "failed"}')
    assert [(r.recipe, r.state) for r in local_runs(tmp_path)] == [
        ("pipe", ENDED_ABRUPTLY),
        ("r", "failed"),  # ...but the lock says how the run ended
    ]
    (runs / "20260101-000002-cccccc").mkdir()  # no record at all: nothing to say
    assert local_runs(tmp_path)[-1].state == "unknown"


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``, from /proc (the steps a killed ninja leaves behind)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_runs_says_a_sigkilled_run_ended_abruptly_not_finished(project: Path) -> None:
    import contextlib
    import signal

    going = subprocess.Popen(
        [NINJA, "run", "recipe.py:nap", "--no-cache"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    left: list[int] = []
    try:
        deadline = time.monotonic() + 20
        while not (left := _descendants(going.pid)) or not local_runs(project):
            assert time.monotonic() < deadline, "the nap run never started its step"
            time.sleep(0.1)
        going.kill()
        going.wait(timeout=30)
        listed = json.loads(ninja(project, "runs", "--json").stdout)
        (run,) = listed["runs"]
        assert (run["recipe"], run["state"]) == ("nap", "ended abruptly (killed?)")
        shown = ninja(project, "runs").stdout
        assert "ended abruptly (killed?)" in shown and "finished" not in shown
    finally:
        going.kill()
        going.wait(timeout=30)
        for pid in left:  # its step outlives it: the reason the state says so
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_runs_says_a_failed_run_failed_without_a_manifest(project: Path) -> None:
    (project / "bad.py").write_text(
        "from shinobi.steps import Cab, Recipe\n"
        "bad = Recipe('bad')\nbad.add_step('no', Cab('no', ['/bin/sh', '-c', 'exit 3']))\n"
    )
    assert ninja(project, "run", "bad.py:bad", "--no-cache", "--no-provenance").returncode == 1
    assert ninja(project, "run", "recipe.py:talk", "--no-cache", "--no-provenance").returncode == 0
    listed = json.loads(ninja(project, "runs", "--json").stdout)["runs"]
    assert sorted((r["recipe"], r["state"]) for r in listed) == [("bad", "failed"), ("talk", "ok")]


@pytest.mark.slow
def test_logs_followed_to_the_end_of_a_silent_run_say_it_kept_none(project: Path) -> None:
    # it ended in silence with status 0, where the same command after the run said why
    going = _running_in_background(project, "recipe.py:hush")
    try:
        (run,) = local_runs(project)
        followed = ninja(project, "logs", run.run_id, "--follow")
        assert followed.returncode == 2 and followed.stdout == ""
        assert f"run {run.run_id} kept no logs" in followed.stderr
        assert going.wait(timeout=30) == 0
    finally:
        going.kill()
        going.wait(timeout=30)


@pytest.mark.slow
def test_logs_of_a_step_the_run_does_not_have_say_so(project: Path) -> None:
    assert ninja(project, "run", "recipe.py:talk", "--no-cache", "--provenance").returncode == 0
    (run,) = local_runs(project)
    wrong = ninja(project, "logs", run.run_id, "sya")
    assert wrong.returncode == 2
    assert f"run {run.run_id} has no step 'sya'; did you mean 'say'? (its steps: say, quiet)" in (
        wrong.stderr
    )
    silent = ninja(project, "logs", run.run_id, "quiet")
    assert silent.returncode == 2 and "kept no logs" in silent.stderr


@pytest.mark.slow
def test_logs_of_a_name_that_matches_nothing_names_the_local_runs_too(project: Path) -> None:
    assert ninja(project, "run", "recipe.py:talk", "--no-cache").returncode == 0
    said = ninja(project, "logs", "tlak")
    assert said.returncode == 2
    assert "local runs here are of talk (`ninja runs` lists their ids)" in said.stderr


def test_a_run_folder_named_in_bytes_that_are_not_utf8_is_listed_with_them_escaped(
    tmp_path: Path,
) -> None:
    runs = tmp_path / ".shinobi" / "runs"
    runs.mkdir(parents=True)
    os.mkdir(os.fsencode(runs) + b"/20260101-000000-bad\xffdir")
    (found,) = local_runs(tmp_path)
    shown = found.to_json()
    assert shown["run_id"] == "20260101-000000-bad\\xffdir"
    # the path, as the workspace's is given: one a script can open (os.fsencode)
    path = json.loads(json.dumps(shown))["path"]
    assert os.path.isdir(os.fsencode(path))
    assert os.fsencode(path).endswith(b"/20260101-000000-bad\xffdir")


def test_clean_runs_leaves_a_folder_that_is_no_run_alone(project: Path) -> None:
    """Only a folder ninja recorded as a run (a lock file or a manifest) is ninja's."""
    notes = project / ".shinobi" / "runs" / "my-notes"
    notes.mkdir(parents=True)
    (notes / "thesis.tex").write_text("precious\n")
    old = time.time() - 3 * 86400
    os.utime(notes / "thesis.tex", (old, old))
    os.utime(notes, (old, old))
    assert "unknown" in ninja(project, "runs").stdout
    cleaned = ninja(project, "clean", "--runs")
    assert cleaned.returncode == 0, cleaned.stderr
    assert "removed 0 run folder(s)" in cleaned.stdout
    assert f"kept {notes}: it is not a run folder" in cleaned.stderr
    assert (notes / "thesis.tex").read_text() == "precious\n"


def test_a_run_that_cannot_write_its_record_leaves_no_empty_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk left a 0-byte .running: the folder then read "unknown" for ever, and
    clean kept it as "no lock file, no manifest"; without one it is cleaned by age."""
    import errno

    from shinobi import local_runs as module

    run_dir = tmp_path / ".shinobi" / "runs" / "20260101-000000-abcdef"
    run_dir.mkdir(parents=True)

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(module.os, "write", full)
    said: list[str] = []
    assert hold_run(run_dir, "pipe", said.append) is None
    assert not (run_dir / module.RUN_RECORD).exists()
    # the run goes on, but says what is lost (it went on silently, exit 0)
    assert said == [
        f"cannot write the run's record {run_dir / module.RUN_RECORD} (No space left on"
        " device): `ninja runs` will not say how this run ended, nor `ninja logs` what its"
        " steps printed if their logs fail too"
    ]


def _cleaned_with(project: Path, files: dict[str, str]) -> tuple[Path, str]:
    """A run folder holding ``files`` (name: text) and nothing else, after ``clean
    --runs``: the folder, and what clean said on stderr."""
    folder = project / ".shinobi" / "runs" / "20260101-000000-abcdef"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    cleaned = ninja(project, "clean", "--runs")
    assert cleaned.returncode == 0, cleaned.stderr
    return folder, cleaned.stderr


def test_clean_says_a_record_it_cannot_read_is_why_it_keeps_a_folder(project: Path) -> None:
    folder, said = _cleaned_with(project, {".running": ""})
    assert f"kept {folder}: its record .running is empty or damaged" in said


def test_clean_tells_a_damaged_manifest_from_none(project: Path) -> None:
    """It said "no manifest" of a folder whose manifest.json is there, damaged."""
    folder, said = _cleaned_with(project, {"manifest.json": "{half"})
    assert f"kept {folder}: it has no lock file, and its manifest.json is damaged" in said
    _, said = _cleaned_with(project, {".running": ""})
    assert "its record .running is empty or damaged, and so is its manifest" in said
    assert folder.is_dir()


def test_logs_of_renamed_files_are_titled_by_step_name_without_a_manifest(project: Path) -> None:
    assert ninja(project, "run", "recipe.py:odd", "--no-cache").returncode == 0
    (run,) = json.loads(ninja(project, "runs", "--json").stdout)["runs"]
    said = ninja(project, "logs", run["run_id"])
    assert said.stdout == "==> cal ms stdout <==\nspaced\n==> cal:ms stdout <==\ncoloned\n"


def test_logs_offers_a_near_step_name_and_tells_a_missing_stream_from_no_logs(
    project: Path,
) -> None:
    assert ninja(project, "run", "recipe.py:ordered", "--no-cache").returncode == 0
    (run,) = json.loads(ninja(project, "runs", "--json").stdout)["runs"]
    misspelt = ninja(project, "logs", run["run_id"], "zetta")
    assert misspelt.returncode == 2 and "did you mean 'zeta'?" in misspelt.stderr
    stream = ninja(project, "logs", run["run_id"], "zeta", "--stream", "stderr")
    assert stream.returncode == 2
    assert "printed nothing to stderr; it kept a stdout log" in stream.stderr


def test_a_step_served_by_another_steps_result_shows_that_steps_logs(
    project: Path, tmp_path: Path
) -> None:
    env_cache = {"SHINOBI_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [NINJA, "run", "recipe.py:twice"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env_cache},
    )
    assert proc.returncode == 0 and "cached    again" in proc.stderr, proc.stderr
    (run,) = json.loads(ninja(project, "runs", "--json").stdout)["runs"]
    said = ninja(project, "logs", run["run_id"], "again")
    assert said.returncode == 0, said.stderr
    assert said.stdout == "said once\n"
    assert "(the result of step 'first')" in said.stderr


def test_a_run_refused_before_any_step_leaves_no_run_folder(project: Path) -> None:
    """It left an empty folder that `ninja runs` listed as 'crashed'."""
    env = {**os.environ, "SHINOBI_BACKEND_VENV": str(project / "no-such-venv")}
    proc = subprocess.run(
        [NINJA, "run", "recipe.py:talk", "-b", "venv", "--provenance"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    assert local_runs(project) == []
    assert "crashed" not in ninja(project, "runs").stdout


def test_clean_says_a_run_the_disk_kept_whole_is_not_removed(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only runs folder: 'only partly removed', though nothing was."""
    import errno
    import shutil

    from cli_in_process import in_process

    assert ninja(project, "run", "recipe.py:talk", "--no-cache").returncode == 0
    monkeypatch.chdir(project)

    def read_only(path: Any, onerror: Any) -> None:  # as rmtree on a read-only mount goes
        for base, _, files in os.walk(path):
            for name in files:
                onerror(
                    os.unlink,
                    os.path.join(base, name),
                    (OSError, OSError(errno.EROFS, "Read-only file system"), None),
                )

    monkeypatch.setattr(shutil, "rmtree", read_only)  # imported where it is used
    code, _out, err = in_process(capsys, "clean", "--runs")
    assert code == 1 and "is not removed: cannot remove" in err and "partly" not in err


def test_clean_keeps_a_run_whose_interrupt_left_something_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Slurm job whose scancel was never confirmed ran on while clean removed the
    folder its logs were still being appended to."""
    from cli_in_process import in_process

    from shinobi.teardown import INTERRUPTED_LEAVING

    runs = tmp_path / ".shinobi" / "runs"
    left = runs / "20260101-000000-aaaaaa"
    left.mkdir(parents=True)
    lock = {"recipe": "r", "pid": 1, "ended": True, "status": INTERRUPTED_LEAVING}
    (left / ".running").write_text(json.dumps(lock))
    monkeypatch.chdir(tmp_path)
    code, out, err = in_process(capsys, "clean", "--runs")
    assert code == 0 and "removed 0 run folder(s)" in out
    assert "its interrupt left something running" in err and left.is_dir()
    code, out, err = in_process(capsys, "clean", "--runs", "--older-than", "0d")
    assert code == 0 and "removed 1 run folder(s)" in out and not left.exists()  # as told


def test_runs_of_the_records_folder_itself_names_the_workdir_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ninja runs --workdir .shinobi` said there were no runs, and that they are kept there."""
    from shinobi.cli.main import main

    (tmp_path / ".shinobi" / "runs" / "20260101-000000-aaaaaa").mkdir(parents=True)
    try:
        main(["runs", "--workdir", str(tmp_path / ".shinobi")])
    except SystemExit as exc:
        assert not exc.code
    said = capsys.readouterr().out
    assert f"--workdir names the directory that holds .shinobi, here {tmp_path}" in said


def test_the_statuses_kept_name_a_scattered_recipes_steps_as_they_ran(tmp_path: Path) -> None:
    """A step of a scattered nested recipe runs as ``ns[0].first``, the graph lists it
    as ``ns.first``: it was kept as "not run" though every slice ran it."""
    from shinobi.local_runs import STEP_STATUSES, note_statuses

    ended = {"ns[0].first": "ok", "ns[0].second": "failed", "ns[0]": "failed", "ns": "failed"}
    note_statuses(tmp_path, ["ns", "ns.first", "ns.second", "ns.third", "after"], ended, set())
    kept = json.loads((tmp_path / STEP_STATUSES).read_text())
    assert kept == {
        "ns[0].second": "failed",
        "ns[0]": "failed",
        "ns": "failed",
        "ns.third": "not run",
        "after": "not run",
    }


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_a_run_folder_this_user_cannot_read_is_kept_and_the_rest_cleaned(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A colleague's run made under umask 077 in a shared workspace stopped `ninja clean
    --runs` at once ("Permission denied", exit 74, nothing removed), and `ninja runs`
    listed it as an unknown run of 1970."""
    import tempfile

    space = Path(tempfile.mkdtemp(prefix="shared-", dir="/tmp"))
    try:
        os.chmod(space, 0o777)
        ours, theirs = (space / ".shinobi" / "runs" / name for name in ("20240101-000000-a", "b"))
        for run in (ours, theirs):
            run.mkdir(parents=True)
            (run / "manifest.json").write_text('{"status": "ok", "recipe": {"name": "r"}}')
        for path in (space / ".shinobi", space / ".shinobi" / "runs", ours):
            os.chown(path, 65534, 65534)
        os.chown(ours / "manifest.json", 65534, 65534)
        os.chmod(theirs, 0o700)  # root's, under umask 077
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        env = {"PATH": os.environ["PATH"], "HOME": str(space), "SHINOBI_CACHE_ENABLED": "0"}
        ninja = [*as_nobody, sys.executable, "-m", "shinobi.cli"]
        listed = subprocess.run(
            [*ninja, "runs", "--json"], cwd=space, env=env, capture_output=True, text=True
        )
        assert listed.returncode == 0, listed.stderr
        states = {r["run_id"]: r["state"] for r in json.loads(listed.stdout)["runs"]}
        assert states == {ours.name: "ok", theirs.name: "unreadable"}
        cleaned = subprocess.run(
            [*ninja, "clean", "--runs", "--older-than", "0"],
            cwd=space,
            env=env,
            capture_output=True,
            text=True,
        )
        assert cleaned.returncode == 0, cleaned.stderr
        assert "cannot read it" in cleaned.stderr and "removed 1 run folder" in cleaned.stdout
        assert not ours.exists() and theirs.exists()
    finally:
        shutil.rmtree(space)


def test_without_a_manifest_logs_tell_a_slice_that_never_ran_from_one_beyond_them(
    project: Path,
) -> None:
    """A slice a failure kept from starting was said to have printed nothing, with a
    nearer slice offered; so was a slice past the last. The run notes its scatters'
    slices that never started as ranges, not a status a slice."""
    assert ninja(project, "run", "recipe.py:halted", "--no-cache").returncode == 1
    (run,) = json.loads(ninja(project, "runs", "--json").stdout)["runs"]
    never = ninja(project, "logs", run["run_id"], "each[4]")
    assert never.returncode == 2
    assert f"step 'each[4]' of run {run['run_id']} did not run, so it printed nothing" in (
        never.stderr
    )
    beyond = ninja(project, "logs", run["run_id"], "each[60]")
    assert beyond.returncode == 2 and "did you mean" not in beyond.stderr
    assert (
        f"run {run['run_id']} has no step 'each[60]': step 'each' had 6 slices, each[0] to each[5]"
    ) in beyond.stderr
    assert ninja(project, "logs", run["run_id"], "each[1]").stdout == "b\n"
    noted = json.loads((project / ".shinobi" / "runs" / run["run_id"] / ".slices").read_text())
    assert noted == {"each": {"count": 6, "not run": [[3, 5]]}}
