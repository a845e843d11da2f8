"""``ninja logs`` on run records: steps served from the step cache, and names that are
not run ids."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shinobi.cli.main import main
from shinobi.local_runs import find_local_run, local_runs

RAN = "20260101-000000-aaaaaa"
CACHED = "20260101-000001-bbbbbb"


def logs(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``ninja logs ARGS`` in this process: exit code, stdout, stderr."""
    try:
        main(["logs", *args])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def write_run(workdir: Path, run_id: str, steps: list[dict[str, Any]]) -> Path:
    """A finished run folder with a manifest recording ``steps``."""
    run_dir = workdir / ".shinobi" / "runs" / run_id
    (run_dir / "logs").mkdir(parents=True)
    manifest = {
        "format": 1,
        "run_id": run_id,
        "status": "ok",
        "recipe": {"name": "r"},
        "steps": [{"logs": {}, "details": {}, **s} for s in steps],
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    (run_dir / ".running").write_text('{"recipe": "r", "pid": 1, "ended": true, "status": "ok"}')
    return run_dir


def cached_from(origin: str, name: str = "up") -> dict[str, Any]:
    return {"name": name, "status": "cached", "cached": True, "details": {"cached_from": origin}}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A run that ran ``up`` (which printed) and ``quiet`` (which did not), and a later run
    that took both from the step cache."""
    ran = write_run(tmp_path, RAN, [{"name": "up", "status": "ok"}, {"name": "quiet"}])
    (ran / "logs" / "up.out").write_text("what up printed\n")
    (ran / "logs" / "up.err").write_text("a warning\n")
    write_run(tmp_path, CACHED, [cached_from(RAN), cached_from(RAN, "quiet")])
    return tmp_path


def test_a_cached_steps_logs_are_those_of_the_run_that_ran_it_and_it_says_so(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = logs(capsys, CACHED, "up", "--stream", "stdout", "--workdir", str(workdir))
    assert code == 0, err
    assert out == "what up printed\n"
    assert err.count("\n") == 1 and "taken from the step cache" in err and f"run {RAN}" in err


def test_a_cached_step_whose_run_is_gone_names_that_run_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path, CACHED, [cached_from(RAN)])  # RAN removed by `ninja clean --runs`
    code, out, err = logs(capsys, CACHED, "up", "--workdir", str(tmp_path))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "kept no logs" not in err
    assert f"taken from the step cache of run {RAN}" in err and f"`ninja logs {RAN} up`" in err


def test_a_cached_step_that_printed_nothing_where_it_ran_says_so(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = logs(capsys, CACHED, "quiet", "--workdir", str(workdir))
    assert code == 2 and err.count("\n") == 1
    assert f"step cache of run {RAN}" in err and "kept no logs of it either" in err


def test_a_run_whose_steps_all_came_from_the_cache_names_the_run_that_ran_them(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = logs(capsys, CACHED, "--workdir", str(workdir))
    assert code == 2 and err.count("\n") == 1
    assert f"2 of its steps were taken from the step cache of run {RAN}" in err
    assert f"`ninja logs {RAN}`" in err


def test_a_step_that_ran_and_printed_nothing_still_kept_no_logs(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = logs(capsys, RAN, "quiet", "--workdir", str(workdir))
    assert code == 2 and "kept no logs" in err and "cache" not in err


def test_a_run_whose_logs_folder_was_removed_says_so_not_that_nothing_was_printed(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    shutil.rmtree(workdir / ".shinobi" / "runs" / RAN / "logs")
    for args in ([RAN], [RAN, "up"], [RAN, "quiet"]):
        code, _out, err = logs(capsys, *args, "--workdir", str(workdir))
        assert code == 2, err
        assert "the run's logs folder" in err and "was removed" in err, err
        assert "printed nothing" not in err


def test_a_log_that_holds_nothing_is_no_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log made on the step's first byte, whose write the disk then refused."""
    run = write_run(tmp_path, RAN, [{"name": "fill", "status": "failed"}])
    (run / "logs" / "fill.out").write_bytes(b"")
    for args in ([RAN], [RAN, "fill"]):
        code, out, err = logs(capsys, *args, "--workdir", str(tmp_path))
        assert (code, out) == (2, ""), err
        assert err.count("\n") == 1 and "kept no logs" in err


def test_a_start_of_a_run_id_that_a_launch_shares_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_launch_fixtures import launch

    write_run(tmp_path, RAN, [{"name": "up", "status": "ok"}])
    launch(tmp_path, run_id="20260101-000000-cccccc")
    code, out, err = logs(capsys, "20260101-000000", "--workdir", str(tmp_path))
    assert (code, out) == (2, "")
    assert f"starts the id of the run {RAN} and of 1 launch (20260101-000000-cccccc)" in err
    code, _, err = logs(capsys, RAN, "--workdir", str(tmp_path))  # the whole id is the run's
    assert "kept no logs" in err


@pytest.mark.parametrize("name", [".", "..", ".shinobi/runs", f"./{RAN}"])
def test_a_name_that_is_not_a_run_id_is_refused_on_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(workdir / ".shinobi" / "runs" if name == ".." else workdir)
    code, out, err = logs(capsys, name, "--workdir", str(workdir))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "`ninja runs`" in err
    assert "run runs" not in err and "kept no logs" not in err
    assert find_local_run(workdir, name) is None


RECIPE = """
from shinobi.steps import Cab, Recipe
talk = Recipe("talk")
talk.add_step("say", Cab("say", ["/bin/sh", "-c", "echo hello; echo oops >&2"]))
"""


def test_a_real_cached_step_shows_the_logs_of_its_first_run(
    ninja: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    (tmp_path / "recipe.py").write_text(RECIPE)
    for _ in range(2):
        assert ninja("run", "recipe.py:talk", "--provenance").returncode == 0
    first, second = (run.run_id for run in local_runs(tmp_path))  # two may share a second
    manifest = json.loads((tmp_path / ".shinobi" / "runs" / second / "manifest.json").read_text())
    assert manifest["steps"][0]["details"]["cached_from"] == first  # the premise
    said = ninja("logs", second, "say", "--stream", "stdout")
    assert said.returncode == 0, said.stderr
    assert said.stdout == "hello\n" and f"logs of run {first}" in said.stderr
    report = ninja("report", second)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / ".shinobi" / "runs" / second / "report.html").read_text()
    assert f'cached from run <a href="../{first}/">{first}</a>' in page
    assert f'<a href="../{first}/logs/say.out">stdout</a>' in page


LATIN = """
from shinobi.steps import Cab, Recipe

latin = Recipe("latin")
latin.add_step("say", Cab("say", ["bash", "-c", "printf 'T=12\\\\xb0C caf\\\\xe9\\\\n'; printf abc | gzip -c"]))
"""


def test_logs_prints_the_bytes_a_step_wrote_as_they_are(tmp_path: Path) -> None:
    """Latin-1 text and binary output came out as UTF-8 replacement characters, with
    a newline added: `ninja logs RUN STEP > file` was not the step's output."""
    import sys

    (tmp_path / "r.py").write_text(LATIN)
    ninja = [sys.executable, "-m", "shinobi.cli"]
    ran = subprocess.run([*ninja, "run", "r.py:latin", "--no-cache"], cwd=tmp_path, check=False)
    assert ran.returncode == 0
    (run,) = (tmp_path / ".shinobi" / "runs").iterdir()
    written = (run / "logs" / "say.out").read_bytes()
    assert written.startswith(b"T=12\xb0C caf\xe9\n") and len(written) > 12
    shown = subprocess.run(
        [*ninja, "logs", run.name, "say", "--stream", "stdout"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == written


def test_followed_logs_print_whole_lines_each_titled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A UTF-8 character cut between two reads came out as two replacement characters,
    and a line cut between two reads as two lines."""
    from shinobi.cli.log_copy import echo_logs as _echo_logs

    out = tmp_path / "s.out"
    out.write_bytes("r\u00e9s".encode()[:2])  # "r" and the first byte of "é"
    offsets: dict[Path, int] = {}
    partial: dict[Path, bytes] = {}
    _echo_logs([("s stdout", out)], offsets, True, partial, final=False)
    assert capsys.readouterr().out == ""
    with out.open("ab") as fh:
        fh.write("r\u00e9sum\u00e9 1\nhalf".encode()[2:])
    _echo_logs([("s stdout", out)], offsets, True, partial, final=False)
    assert capsys.readouterr().out == "[s stdout] r\u00e9sum\u00e9 1\n"
    _echo_logs([("s stdout", out)], offsets, True, partial, final=True)
    assert capsys.readouterr().out == "[s stdout] half\n"
