"""``ninja cache prune --older-than`` goes by an entry's last use.

A user pruning "entries older than 30 days" keeps an entry a run hit
yesterday: a hit sets the entry file's modification time (its last use), and
``prune`` and ``ls`` go by the later of that and when it was stored. Entries
made long ago and hit since were pruned by their creation time.
"""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process
from test_cache_moved import _recipe

from shinobi.cache_entries import USE_GRAIN
from shinobi.config import load_config
from shinobi.runner import run_recipe

DAY = 86400.0


def _run(project: Path, cache: Path) -> list[str]:
    result = run_recipe(_recipe(), config=load_config({"cache.dir": str(cache)}), cwd=project)
    assert result.ok
    assert result.warnings == []
    return [step.status for step in result.steps]


def _made_long_ago(tmp_path: Path, days: float = 40) -> tuple[Path, Path, Path]:
    """A project whose one entry was stored ``days`` ago: (project, cache, entry file)."""
    project, cache = tmp_path / "w", tmp_path / "cache"
    project.mkdir()
    assert _run(project, cache) == ["ok"]
    (entry,) = cache.glob("entries/*/*.json")
    then = time.time() - days * DAY
    entry.write_text(json.dumps({**json.loads(entry.read_text()), "created": then}))
    os.utime(entry, (then, then))
    return project, cache, entry


def _ls(capsys: pytest.CaptureFixture[str], cache: Path) -> list[dict[str, Any]]:
    code, out, err = in_process(capsys, "cache", "ls", "--json", "--cache-dir", str(cache))
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)["entries"]
    return rows


def test_an_entry_hit_since_is_kept_by_prune_older_than(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, cache, entry = _made_long_ago(tmp_path)
    assert _run(project, cache) == ["cached"]  # used today
    code, out, err = in_process(
        capsys, "cache", "prune", "--older-than", "30d", "--cache-dir", str(cache)
    )
    assert code == 0, err
    assert out.strip() == "removed 0 entries"
    assert time.time() - entry.stat().st_mtime < USE_GRAIN
    (row,) = _ls(capsys, cache)
    assert time.time() - row["created"] > 39 * DAY
    assert time.time() - row["last_used"] < USE_GRAIN
    assert _run(project, cache) == ["cached"]


def test_an_entry_not_used_for_the_age_is_pruned_saying_when_it_was_last_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, cache, entry = _made_long_ago(tmp_path)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.stat().st_mtime))
    code, out, err = in_process(
        capsys, "cache", "prune", "--older-than", "30d", "--cache-dir", str(cache)
    )
    assert code == 0, err
    assert f"(last used {when})" in out
    assert out.strip().endswith("removed 1 entry")
    assert not entry.exists()


def test_a_hit_soon_after_the_last_use_writes_no_time(tmp_path: Path) -> None:
    """A cached re-run within :data:`USE_GRAIN` of the last use leaves the file alone."""
    project, cache = tmp_path / "w", tmp_path / "cache"
    project.mkdir()
    assert _run(project, cache) == ["ok"]
    (entry,) = cache.glob("entries/*/*.json")
    recent = time.time() - USE_GRAIN / 2
    os.utime(entry, (recent, recent))
    before = entry.stat().st_mtime_ns
    assert _run(project, cache) == ["cached"]
    assert entry.stat().st_mtime_ns == before


def test_a_cache_that_refuses_the_time_still_serves_the_hit_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared, read-only cache: the last use is not recorded, and nothing is said."""
    project, cache, entry = _made_long_ago(tmp_path)
    real = os.utime
    refused: list[str] = []

    def utime(path: Any, *args: Any, **kwargs: Any) -> None:
        if str(path).startswith(str(cache)):
            refused.append(str(path))
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        real(path, *args, **kwargs)

    monkeypatch.setattr(os, "utime", utime)
    assert _run(project, cache) == ["cached"]
    assert refused == [str(entry)]
    assert time.time() - entry.stat().st_mtime > 39 * DAY


def test_ls_says_which_time_it_shows_and_lists_the_last_used_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, cache, old = _made_long_ago(tmp_path)
    other = old.with_name("0" * 64 + ".json")  # made later, never hit since
    later = time.time() - 10 * DAY
    data = json.loads(old.read_text())
    other.write_text(json.dumps({**data, "key": "0" * 64, "step": "other", "created": later}))
    os.utime(other, (later, later))
    assert [row["step"] for row in _ls(capsys, cache)] == ["other", "write"]
    assert _run(project, cache) == ["cached"]  # `write` made first, used last
    assert [row["step"] for row in _ls(capsys, cache)] == ["write", "other"]
    code, out, err = in_process(capsys, "cache", "ls", "--cache-dir", str(cache))
    assert code == 0, err
    header, first, second, _ = out.splitlines()
    assert header.split()[:4] == ["key", "last", "used", "step"]
    today = time.strftime("%Y-%m-%d", time.localtime())
    assert (first.split()[1], first.split()[3]) == (today, "write")
    assert second.split()[3] == "other"


def test_an_entry_a_run_hits_while_prune_judges_it_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """prune judges every entry before it removes any (hashing outputs may take
    minutes): an entry a run stored afresh, or hit, in between was removed all
    the same, and the next run ran the step again."""
    import shinobi.cli.cache as cache_cli

    project, cache, entry = _made_long_ago(tmp_path)
    judge = cache_cli._why_prune

    def judged_then_hit(*args: Any) -> str | None:
        why = judge(*args)
        assert _run(project, cache) == ["cached"]  # another terminal's run, meanwhile
        return why

    monkeypatch.setattr(cache_cli, "_why_prune", judged_then_hit)
    code, out, err = in_process(
        capsys, "cache", "prune", "--older-than", "30d", "--cache-dir", str(cache)
    )
    assert code == 0, err
    assert entry.exists()
    assert out.splitlines()[-1] == (
        "removed 0 entries; kept 1 entry a run stored or used while prune ran"
    )
