"""Commands that remove or read records refuse what would surprise, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    try:
        main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    else:
        code = 0
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("clean", "--runs", "--older-than", "nan"), "write an age like 30d"),
        (("clean", "--runs", "--older-than", ""), "write an age like 30d"),
        (("cache", "prune", "--older-than", ""), "write an age like 30d"),
        (("clean", "--launches", "--older-than", "3"), "applies to run folders: add --runs"),
        (("clean", "--runs", "--force"), "applies to launches still running: add --launches"),
        (("cache", "rm", "--step", "nosuch"), "no cache entry is for a step 'nosuch'"),
        (("cache", "rm", "--step", "x", "--all"), "give only one"),
        (("cache", "rm", ""), "an empty key names every entry"),
    ],
)
def test_a_request_that_would_remove_too_much_or_nothing_is_refused(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    said: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / ".shinobi" / "runs" / "20260101-000000-abcdef").mkdir(parents=True)
    code, err = run(capsys, *args)
    assert code == 2
    assert err.startswith("ninja: error:") and said in err and err.count("\n") == 1
    assert (tmp_path / ".shinobi" / "runs" / "20260101-000000-abcdef").is_dir()


def test_a_damaged_manifest_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    weird = tmp_path / "weird.json"
    weird.write_text('{"format": 1, "steps": [{"name": 5}], "recipe": "x", "graph": {"nodes": 3}}')
    code, err = run(capsys, "report", str(weird), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "not a readable run manifest" in err and err.count("\n") == 1


@pytest.mark.parametrize("command", [("status", "x", "--watch"), ("logs", "x", "--follow")])
@pytest.mark.parametrize("seconds", ["nan", "inf", "-inf", "1e12"])
def test_an_interval_that_is_no_number_of_seconds_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: tuple[str, ...],
    seconds: str,
) -> None:
    """NaN passed click's range and ended in an internal error (exit 70)."""
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, *command, "--interval", seconds)
    assert code == 2 and err.count("\n") == 1
    assert "no number of seconds" in err or "not in the range" in err  # 1e12: OverflowError


@pytest.mark.parametrize("before", [True, False])
def test_remote_is_said_to_be_planned_wherever_it_is_written(
    capsys: pytest.CaptureFixture[str], before: bool
) -> None:
    """The README and ``ninja doctor`` call ``--remote`` planned; the run answered
    "No such option; a recipe's inputs go after FILE.py:NAME", a wrong fix."""
    example = str(Path(__file__).resolve().parents[2] / "examples" / "offload_demo.py") + ":pipe"
    args = ["--remote", "host", example] if before else [example, "--remote", "host"]
    code, err = run(capsys, "run", *args)
    assert code == 2
    assert "--remote is planned, not implemented yet" in err
    assert "inputs go after" not in err
