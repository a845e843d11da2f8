"""ninja status / runs / logs / cancel / clean over a stand-in engine: core's side of launches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process as ninja
from test_launch_fixtures import FakeTarget, engine, launch

__all__ = ["engine"]  # the fixture, imported so pytest finds it


def test_status_by_handle_folder_run_id_and_recipe(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = launch(tmp_path)
    engine.rounds = [{"make": "completed", "use": "running"}]
    for name in (str(handle.path), str(tmp_path / ".shinobi" / "pipe"), "run1", "pipe"):
        code, out, err = ninja(capsys, "status", name)
        assert code == 0, err
        assert "launch pipe/run1  engine fake" in out
        assert out.splitlines()[-1] == "running: 1 completed, 1 running"


def test_status_json_and_a_failed_launch_exits_1(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path)
    engine.rounds = [{"make": "completed", "use": "failed"}]
    code, out, _ = ninja(capsys, "status", "pipe", "--json")
    assert code == 1
    data = json.loads(out)
    assert data["state"] == "failed" and [s["phase"] for s in data["steps"]] == [
        "completed",
        "failed",
    ]
    assert "step 'use' failed" in data["summary"]


@pytest.mark.parametrize("phase", ["failed", "cancelled"])
def test_a_step_that_failed_or_was_cancelled_while_others_run_makes_status_exit_1(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str], phase: str
) -> None:
    """A step cancelled from outside (scancel) means the launch cannot complete either."""
    launch(tmp_path)
    engine.rounds = [{"make": phase, "use": "running"}]
    code, out, _ = ninja(capsys, "status", "pipe")
    assert code == 1 and "running" in out


@pytest.mark.parametrize("went", ["failed", "cancelled"])
def test_a_job_array_with_a_failed_task_makes_status_exit_1_while_it_runs(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    went: str,
) -> None:
    """An array whose task failed (or was scancel'ed) while another still ran showed
    "running", exit 0, and the summary named no failure: its dependants never run."""
    from shinobi.launch.tracking import LaunchStatus, StepState

    def answer(self: FakeTarget, handle: Any) -> LaunchStatus:
        tasks = {went: 1, "running": 1}
        steps = [
            StepState("make", "running", "task 0: exited with code 4", tasks=tasks),
            StepState("use", "pending"),
        ]
        return LaunchStatus(handle=handle, steps=steps)

    monkeypatch.setattr(FakeTarget, "_answer", answer)
    launch(tmp_path)
    code, out, _ = ninja(capsys, "status", "pipe")
    assert code == 1
    if went == "failed":
        assert "step 'make' has a failed task: task 0: exited with code 4" in out


def test_status_watch_json_is_one_document_per_line(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pretty-printed documents one after another were neither JSON nor JSON Lines."""
    launch(tmp_path)
    engine.rounds = [
        {"make": "running", "use": "pending"},
        {"make": "completed", "use": "completed"},
    ]
    code, out, _ = ninja(capsys, "status", "pipe", "--watch", "--json", "--interval", "0.5")
    assert code == 0
    states = [json.loads(line)["state"] for line in out.splitlines()]
    assert states == ["running", "completed"]


def test_status_watch_asks_once_per_round_until_the_end(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path)
    engine.rounds = [
        {"make": "running", "use": "pending"},
        {"make": "running", "use": "pending"},
        {"make": "completed", "use": "running"},
        {"make": "completed", "use": "completed"},
    ]
    code, out, _ = ninja(capsys, "status", "pipe", "--watch", "--interval", "0.5")
    assert code == 0
    assert engine.status_calls == 4
    summaries = [line for line in out.splitlines() if line.startswith(("running:", "completed:"))]
    assert summaries == [
        "running: 1 running, 1 pending",
        "running: 1 completed, 1 running",
        "completed: 2 completed",
    ]


def test_a_launch_is_named_by_a_unique_start_of_its_run_id(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path, run_id="20260130-101500-3fa9c1", created=1.0)
    launch(tmp_path, run_id="20260130-111500-77aa01", created=2.0)
    engine.rounds = [{"make": "completed", "use": "running"}]
    code, out, err = ninja(capsys, "status", "20260130-10")
    assert code == 0, err
    assert "launch pipe/20260130-101500-3fa9c1" in out
    code, _, err = ninja(capsys, "status", "20260130-1")
    assert code == 2
    assert "'20260130-1' starts the run ids of 2 launches" in err and "give more of it" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["cancel", "status", "logs"])
def test_an_empty_name_names_no_launch(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """`ninja cancel "$RUN"` with RUN unset cancelled the workspace's launch ("" is ".")."""
    launch(tmp_path)
    code, _, err = ninja(capsys, command, "", "--workdir", str(tmp_path))
    assert code == 2 and "name is empty (an unset shell variable?)" in err
    assert len(err.strip().splitlines()) == 1 and engine.cancelled == []


def test_an_unknown_launch_names_what_there_is(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path)
    code, _, err = ninja(capsys, "status", "nope")
    assert code == 2
    assert "no launch named 'nope'" in err and "recipes launched here: pipe" in err
    assert len(err.strip().splitlines()) == 1


def test_a_launch_of_an_engine_not_installed_says_so(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = launch(tmp_path)
    assert handle.path is not None
    data = json.loads(handle.path.read_text())
    data["engine"] = "martian"
    handle.path.write_text(json.dumps(data))
    code, _, err = ninja(capsys, "status", str(handle.path))
    assert code == 2 and "unknown offload engine 'martian'" in err


def test_a_launch_noted_ended_is_cleaned_without_its_engine(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its ``ended`` file says how it ended, and it is not asked about again: ``clean
    --launches`` on a laptop without the engine's plugin refused it as unknown."""
    ended, unended = launch(tmp_path, run_id="ended"), launch(tmp_path, run_id="open")
    for handle in (ended, unended):
        assert handle.path is not None
        data = json.loads(handle.path.read_text())
        data["engine"] = "martian"
        handle.path.write_text(json.dumps(data))
    (ended.run_dir / "ended").write_text("completed\n")
    code, out, _ = ninja(capsys, "runs")
    assert code == 0
    (row,) = [line for line in out.splitlines() if line.startswith("ended ")]
    assert "completed" in row
    code, out, err = ninja(capsys, "clean", "--launches")
    assert code == 1  # the other is kept: nothing here can tell whether it runs
    assert "removed pipe/ended (completed)" in out
    assert "kept pipe/open: it is unknown" in err
    assert not ended.run_dir.exists() and unended.run_dir.exists()


def test_runs_lists_this_workspace_with_state(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path, run_id="run1", created=1.0)
    launch(tmp_path, recipe="other", run_id="run2", created=2.0)
    elsewhere = tmp_path / "elsewhere"
    launch(elsewhere, run_id="run3", created=3.0)
    code, out, _ = ninja(capsys, "runs")
    assert code == 0
    assert out.splitlines()[0] == "detached launches:"
    rows = out.splitlines()[2:]  # after the heading and the table's own header
    assert [row.split()[0] for row in rows] == ["run1", "run2"]
    assert (engine.many_calls, engine.status_calls) == (1, 0), "one question for all launches"
    code, out, _ = ninja(capsys, "runs", "--all", "--json")
    assert [entry["run_id"] for entry in json.loads(out)["launches"]] == ["run1", "run2", "run3"]


def test_runs_exits_74_when_the_engine_could_not_be_asked(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It listed every launch as unknown and exited 0: a script could not tell."""
    from shinobi.launch.tracking import LaunchStatus

    launch(tmp_path, run_id="run1")

    def away(self: FakeTarget, handles: list) -> list:  # type: ignore[type-arg]
        return [LaunchStatus(handle=h, error="could not ask Slurm (it is away)") for h in handles]

    monkeypatch.setattr(FakeTarget, "status_many", away)
    for args in (("runs",), ("runs", "--json")):
        code, out, err = ninja(capsys, *args)
        assert code == 74, err
        assert "run1" in out
        assert "ninja: 1 launch not asked: could not ask Slurm (it is away)" in err


@pytest.mark.parametrize("answer", ["away", "purged"])
def test_a_launch_on_record_as_ended_keeps_its_end_whatever_the_engine_says_now(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
) -> None:
    """Its ``ended`` file said completed, but with the cluster out of reach ``runs``
    and ``status`` called it unknown and exited 74, and ``clean --launches`` kept it
    "while its jobs go on"; with its jobs purged from accounting it read cancelled."""
    from shinobi.launch.tracking import LaunchStatus, StepState

    def now(self: FakeTarget, handle: Any) -> LaunchStatus:
        if answer == "away":
            steps = [StepState("make", "unknown", "Slurm could not be asked")]
            return LaunchStatus(handle=handle, steps=steps, error="could not ask Slurm (away)")
        steps = [StepState("make", "cancelled", "Slurm has no record of this job")]
        return LaunchStatus(handle=handle, steps=steps)

    monkeypatch.setattr(FakeTarget, "_answer", now)
    monkeypatch.setattr(FakeTarget, "status_many", lambda self, hs: [now(self, h) for h in hs])
    ended, unended = launch(tmp_path, run_id="ended"), launch(tmp_path, run_id="open")
    (ended.run_dir / "ended").write_text("completed\n")
    code, out, err = ninja(capsys, "runs", "--json")
    states = {entry["run_id"]: entry["state"] for entry in json.loads(out)["launches"]}
    assert states["ended"] == "completed", out
    assert states["open"] == ("unknown" if answer == "away" else "cancelled")
    assert code == (74 if answer == "away" else 0), err  # the open one is not known
    code, out, err = ninja(capsys, "status", "ended")
    assert code == 0, out + err
    assert "completed (as recorded when it ended" in out
    code, out, err = ninja(capsys, "clean", "--launches")
    assert "removed pipe/ended (completed)" in out, err
    assert not ended.run_dir.exists()
    assert unended.run_dir.exists() == (answer == "away")


def test_runs_notes_a_handle_deleted_by_hand(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = launch(tmp_path)
    assert handle.path is not None
    handle.path.unlink()
    (tmp_path / ".shinobi" / "pipe" / "handle.json").unlink()
    code, out, err = ninja(capsys, "runs")
    assert code == 0 and "is gone" in err and "no detached launches" in out


def test_logs_of_a_launch_and_of_one_step(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path)
    code, out, _ = ninja(capsys, "logs", "pipe")
    assert code == 0
    assert out == "==> make stdout <==\nmake says hello\n==> use stdout <==\nuse says hello\n"
    code, out, _ = ninja(capsys, "logs", "pipe", "use")
    assert out == "use says hello\n"


def test_logs_of_a_launch_are_the_bytes_its_jobs_wrote(
    engine: type[FakeTarget], tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Latin-1 and binary bytes came out as replacement characters, with a newline added."""
    handle = launch(tmp_path)
    written = b"caf\xe9 \xc3\xa9t\xc3\xa9\n\xffbin"
    Path(str(handle.jobs[1].stdout)).write_bytes(written)
    try:
        from shinobi.cli.main import main

        main(["logs", "pipe", "use"])
    except SystemExit as exc:
        assert not exc.code
    assert capsysbinary.readouterr().out == written


def test_logs_of_a_launch_that_wrote_none_yet_say_so(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = launch(tmp_path)
    for job in handle.jobs:
        Path(str(job.stdout)).unlink()  # pending jobs: no log file yet
    code, out, err = ninja(capsys, "logs", "pipe")
    assert code == 2 and out == ""
    assert "launch pipe has no log yet, or left none" in err and "ninja status" in err


def test_logs_of_a_launch_step_that_never_ran_say_so(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "no log yet", which sent the user off to wait for a step that never will."""
    handle = launch(tmp_path)
    Path(str(handle.jobs[1].stdout)).unlink()
    engine.rounds = [{"make": "failed", "use": "cancelled"}]
    code, out, err = ninja(capsys, "logs", "pipe", "use")
    assert code == 2 and out == ""
    assert "step 'use' of launch pipe did not run (cancelled), so it printed nothing" in err


def test_logs_follow_until_the_launch_ends(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = launch(tmp_path)
    engine.rounds = [{"use": "running"}, {"use": "running"}, {"use": "completed"}]
    code, out, _ = ninja(capsys, "logs", "pipe", "--follow", "--interval", "0.5")
    assert code == 0
    assert out.splitlines() == ["[make stdout] make says hello", "[use stdout] use says hello"]
    assert engine.status_calls == 3
    assert handle.jobs[0].stdout


def test_logs_followed_to_the_end_of_a_silent_launch_say_so(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = launch(tmp_path)
    for job in handle.jobs:
        Path(str(job.stdout)).unlink()  # jobs that printed nothing
    engine.rounds = [{"use": "running"}, {"use": "completed"}]
    code, out, err = ninja(capsys, "logs", "pipe", "--follow", "--interval", "0.5")
    assert code == 2 and out == ""  # as without --follow, not a silent success
    assert "launch pipe has no log yet, or left none" in err and engine.status_calls == 2


def test_cancel_asks_the_engine(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path)
    code, out, _ = ninja(capsys, "cancel", "run1")
    assert code == 0 and engine.cancelled == ["run1"]
    assert out == "pipe/run1: cancelled 2 fake job(s)\n"


def test_clean_keeps_a_running_launch_and_says_why(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path, run_id="old", created=1.0)
    launch(tmp_path, run_id="live", created=2.0)
    engine.running = {"live"}
    code, out, err = ninja(capsys, "clean", "--launches")
    assert code == 1
    assert "removed pipe/old (completed)" in out
    assert (
        "kept pipe/live: it is running" in err and "--force" in err and "ninja cancel live" in err
    )
    assert not (tmp_path / ".shinobi" / "pipe" / "old").exists()
    assert (tmp_path / ".shinobi" / "pipe" / "live" / "handle.json").exists()
    code, out, err = ninja(capsys, "clean", "--launches", "--force")
    assert code == 0 and "removed the record of pipe/live" in out
    assert "pipe/live was running: its jobs go on" in err  # and how to stop them
    # its jobs still write their logs into its folder: only the handle goes
    assert "is kept" in err
    assert not (tmp_path / ".shinobi" / "pipe" / "live" / "handle.json").exists()
    assert (tmp_path / ".shinobi" / "pipe" / "live").is_dir()
    listed = ninja(capsys, "runs")[1]
    assert "no detached launches" in listed
    assert f"no local runs in {tmp_path}" in listed  # both kinds said, even when neither is here


def test_clean_needs_to_be_told_what(
    engine: type[FakeTarget], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = ninja(capsys, "clean")
    assert code == 2 and "--launches" in err


def test_a_launch_whose_handle_went_with_its_workdir_is_named_with_how_to_stop_it(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    launch(tmp_path)
    shutil.rmtree(tmp_path / ".shinobi")  # the workdir's records deleted, the index kept
    for command in ("status", "cancel"):
        code, _, err = ninja(capsys, command, "run1")
        assert code == 2
        assert "launch pipe/run1 has no handle any more" in err
        assert "its fake jobs may still run: stop them with fake's own tools" in err


def test_a_launch_moved_with_its_workdir_still_shows_its_logs(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "old").mkdir()
    launch(tmp_path / "old")
    (tmp_path / "old").rename(tmp_path / "new")
    monkeypatch.chdir(tmp_path / "new")
    code, out, err = ninja(capsys, "logs", "pipe", "use")
    assert code == 0, err
    assert out == "use says hello\n"


def test_clean_says_how_to_stop_the_jobs_of_a_launch_it_forgets(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    launch(tmp_path)
    shutil.rmtree(tmp_path / ".shinobi")
    code, out, _ = ninja(capsys, "clean", "--launches")
    assert code == 0
    assert "forgot 1 launch(es) whose handle was already gone" in out
    assert "  pipe/run1: stop them with fake's own tools" in out


def test_report_of_a_launch_points_to_status_and_logs(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path)
    for name in ("pipe", "run1"):
        code, _, err = ninja(capsys, "report", name)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert f"'{name}' is the launch pipe/run1, compiled for a cluster" in err
        assert f"`ninja status {name}` and `ninja logs {name}`" in err
    code, _, err = ninja(capsys, "report", "nope")
    assert code == 2 and "no run 'nope' in " in err and "or give --workdir" in err


def test_status_of_a_local_run_says_where_to_look_instead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said only "no launch named ...": a `ninja run` has logs and a listing of its own."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text(
        "from shinobi.steps import Cab, Recipe\n"
        'r = Recipe("here")\n'
        'r.add_step("t", Cab("t", ["/bin/true"]))\n'
    )
    assert ninja(capsys, "run", "r.py:r")[0] == 0
    for name in ("here", next((tmp_path / ".shinobi" / "runs").iterdir()).name):
        code, _, err = ninja(capsys, "status", name)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert "with `ninja run`, not a launch" in err and f"`ninja logs {name}`" in err


def test_one_damaged_handle_hides_no_other_launch(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine refuses a batch holding a damaged handle: `runs` and `clean` failed
    for every launch, naming no handle file."""
    from shinobi.errors import UsageError

    launch(tmp_path, run_id="good", created=1.0)
    launch(tmp_path, run_id="bad", created=2.0)
    answer = FakeTarget.status_many

    def refusing(self: FakeTarget, handles: list) -> list:  # type: ignore[type-arg]
        if any(h.run_id == "bad" for h in handles):
            raise UsageError("a launch handle names 'abc' as a job id: the handle is damaged")
        return answer(self, handles)

    monkeypatch.setattr(FakeTarget, "status_many", refusing)
    code, out, _ = ninja(capsys, "runs")
    assert code == 0
    assert "good" in out and "completed" in out
    assert "the handle is damaged" in out and "bad/handle.json" in out
    code, out, _ = ninja(capsys, "clean", "--launches", "--force")
    assert "removed pipe/good (completed)" in out and "removed the record of pipe/bad" in out


def test_a_handle_that_cannot_be_read_is_said_once_and_clean_force_removes_it(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It vanished from `runs` (with advice fit for another command, printed twice)
    and `clean --launches --force` said there was nothing to clean."""
    launch(tmp_path, run_id="good", created=1.0)
    launch(tmp_path, run_id="bad", created=2.0)
    bad = tmp_path / ".shinobi" / "pipe" / "bad" / "handle.json"
    bad.write_text(bad.read_text().replace('"created": 2.0', '"created": "yesterday"'))
    code, out, err = ninja(capsys, "runs")
    assert code == 0 and "good" in out
    said = [line for line in (out + err).splitlines() if "is damaged" in line]
    assert len(said) == 1, out + err
    assert f"launch handle {bad} is damaged" in said[0]
    assert "`ninja clean --launches --force` removes it" in said[0]
    code, out, err = ninja(capsys, "clean", "--launches")
    assert code == 1 and f"kept the damaged launch handle {bad}" in err
    assert bad.exists()
    code, out, err = ninja(capsys, "clean", "--launches", "--force")
    assert code == 0, err
    assert f"removed the damaged launch handle {bad}" in out
    # the file alone: whether its jobs still write their logs there cannot be told
    assert not bad.exists() and (bad.parent / "logs").is_dir()
    assert f"its folder {bad.parent} is kept" in out
    code, out, err = ninja(capsys, "runs")
    assert "damaged" not in out + err


def test_status_and_cancel_of_a_launch_whose_handle_is_damaged_say_so(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """They said "no launch named 'pipe' ... (recipes launched here: none)"."""
    launch(tmp_path, run_id="bad")
    bad = tmp_path / ".shinobi" / "pipe" / "bad" / "handle.json"
    bad.write_text("")
    for command in ("status", "cancel"):
        for name in ("pipe", "bad"):
            code, _, err = ninja(capsys, command, name)
            assert code == 2 and len(err.strip().splitlines()) == 1, err
            assert str(bad) in err and "is damaged" in err
            assert "`ninja clean --launches --force` removes" in err


def test_a_folder_named_like_a_recipe_does_not_stand_in_for_its_launch(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``./many`` held another workspace's launch, and ``ninja cancel many`` stopped
    that one, not this workspace's launch of the recipe ``many``."""
    launch(tmp_path, recipe="many", run_id="here1")
    launch(tmp_path / "many", recipe="tick", run_id="there1")
    code, out, err = ninja(capsys, "status", "many")
    assert code == 2, out
    assert "'many' names both this workspace's launch many/here1 and the launch tick/there1" in err
    engine.rounds = [{"make": "completed", "use": "completed"}]
    code, out, err = ninja(capsys, "status", "./many")  # the folder, said as a path
    assert code == 0 and "launch tick/there1" in out, err
    code, out, err = ninja(capsys, "status", "here1")
    assert code == 0 and "launch many/here1" in out, err


@pytest.mark.parametrize("kind", ["file", "empty folder"])
def test_a_file_or_folder_named_like_a_recipe_but_holding_no_launch_is_passed_over(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """Notes called ``selfcal`` were read as a damaged handle; an empty ``ip/`` "held no
    launch handle"; both hid the launch of the recipe of that name."""
    launch(tmp_path, recipe="selfcal", run_id="run9")
    if kind == "file":
        (tmp_path / "selfcal").write_text("notes on the self-calibration\n")
    else:
        (tmp_path / "selfcal").mkdir()
    engine.rounds = [{"make": "completed", "use": "running"}]
    code, out, err = ninja(capsys, "status", "selfcal")
    assert code == 0, err
    assert "launch selfcal/run9" in out


def _quick_run(workdir: Path) -> Any:
    """A one-step native run in ``workdir``, as ``ninja run`` makes it."""
    from pydantic import BaseModel

    from shinobi.runner import run_recipe
    from shinobi.steps import Cab, Recipe

    quick = Recipe("q", BaseModel)
    quick.add_step("now", Cab("now", ["true"]))
    result = run_recipe(quick, cwd=workdir, use_cache=False)
    assert result.ok, result.error
    return result


def test_a_run_is_warned_of_a_launch_of_its_workspace_still_running(
    engine: type[FakeTarget], tmp_path: Path
) -> None:
    """`ninja compile --submit` then `ninja run` of one recipe in one workspace: both
    wrote the same file, and the run said nothing (and cached the mixture)."""
    launch(tmp_path)
    engine.running = {"run1"}
    (said,) = _quick_run(tmp_path).warnings
    assert said.startswith("launch pipe/run1 (fake) of this workspace is still running: ")
    assert said.endswith("`ninja status run1` shows it, `ninja cancel run1` stops it")
    assert engine.many_calls == 1
    assert not (tmp_path / ".shinobi" / "pipe" / "run1" / "ended").exists()


def test_a_launch_found_ended_is_not_asked_about_again(
    engine: type[FakeTarget], tmp_path: Path
) -> None:
    launch(tmp_path)
    launch(tmp_path, run_id="run2", created=2.0)
    assert _quick_run(tmp_path).warnings == []
    assert engine.many_calls == 1  # one question for both
    assert (tmp_path / ".shinobi" / "pipe" / "run1" / "ended").read_text() == "completed\n"
    assert _quick_run(tmp_path).warnings == []
    assert engine.many_calls == 1


def test_a_run_where_nothing_was_launched_asks_no_engine(
    engine: type[FakeTarget], tmp_path: Path
) -> None:
    assert _quick_run(tmp_path).warnings == []
    assert engine.many_calls == engine.status_calls == 0


def test_status_marks_a_launch_it_finds_ended(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch(tmp_path)
    ended = tmp_path / ".shinobi" / "pipe" / "run1" / "ended"
    engine.rounds = [{"use": "running"}]
    assert ninja(capsys, "status", "run1")[0] == 0
    assert not ended.exists()
    engine.rounds = [{"use": "failed"}]
    assert ninja(capsys, "status", "run1")[0] == 1
    assert ended.read_text() == "failed\n"
