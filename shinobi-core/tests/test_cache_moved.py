"""A moved project's cache entries are judged where they were last used.

A hit in another directory than an entry records (a moved or copied project)
records that place, so ``ninja cache ls --stale`` and ``prune`` look for its
outputs there instead of calling it stale and deleting it. A hit in the same
place writes nothing, and a cache that cannot be written to leaves the run
alone.
"""

from __future__ import annotations

import errno
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process
from pydantic import BaseModel

import shinobi.cache
from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class OutIn(BaseModel):
    out: Path


class OutOut(BaseModel):
    out: File


def _recipe() -> Recipe:
    writer = Cab(
        "writer",
        ["/bin/sh", "-c", 'echo made > "$0"'],
        OutIn,
        OutOut,
        {"out": ParamMeta(positional=True)},
    )
    recipe = Recipe("moved")
    recipe.add_step("write", writer, out=Path("made.txt"))
    return recipe


def _run(project: Path, cache: Path) -> list[str]:
    """Run the recipe in ``project``; the status of each step."""
    result = run_recipe(_recipe(), config=load_config({"cache.dir": str(cache)}), cwd=project)
    assert result.ok
    return [step.status for step in result.steps]


def _entries(cache: Path) -> list[dict[str, Any]]:
    return [json.loads(f.read_text()) for f in sorted(cache.glob("entries/*/*.json"))]


def _moved(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project run once in ``old``, then moved to ``new``: (old, new, cache)."""
    old, new, cache = tmp_path / "w6", tmp_path / "w7", tmp_path / "cache"
    old.mkdir()
    assert _run(old, cache) == ["ok"]
    old.rename(new)
    return old, new, cache


def test_a_hit_in_a_moved_project_keeps_its_entries_from_ls_stale_and_prune(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new, cache = _moved(tmp_path)
    assert _run(new, cache) == ["cached"]
    (entry,) = _entries(cache)
    assert (entry["cwd"], entry["used_cwd"]) == (str(old), str(new))
    code, out, err = in_process(
        capsys, "cache", "ls", "--stale", "--json", "--cache-dir", str(cache)
    )
    assert code == 0, err
    (row,) = json.loads(out)["entries"]
    assert row["stale"] is False
    assert (row["cwd"], row["used_cwd"], row["used_host"]) == (
        str(old),
        str(new),
        socket.gethostname(),
    )
    code, out, err = in_process(capsys, "cache", "prune", "--cache-dir", str(cache))
    assert code == 0, err
    assert out.strip() == "removed 0 entries"
    assert _run(new, cache) == ["cached"]


def test_a_moved_project_not_run_again_is_still_judged_where_it_was_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What prune does to a project moved and never run there since (as the docs say)."""
    _, _, cache = _moved(tmp_path)
    code, out, err = in_process(capsys, "cache", "prune", "--cache-dir", str(cache))
    assert code == 0, err
    assert "removed 1 entry" in out


def test_a_hit_in_the_same_place_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, cache = tmp_path / "w", tmp_path / "cache"
    project.mkdir()
    assert _run(project, cache) == ["ok"]
    writes: list[Path] = []
    monkeypatch.setattr(shinobi.cache, "write_atomically", lambda path, data: writes.append(path))
    assert _run(project, cache) == ["cached"]
    assert writes == []
    assert "used_cwd" not in _entries(cache)[0]


def test_a_place_that_moved_is_written_once(tmp_path: Path) -> None:
    _, new, cache = _moved(tmp_path)
    assert _run(new, cache) == ["cached"]
    (path,) = cache.glob("entries/*/*.json")
    before = path.stat()
    assert _run(new, cache) == ["cached"]
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_cache_that_cannot_be_written_still_serves_the_moved_project_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared, read-only cache: the place is not recorded, and nothing is said."""
    _, new, cache = _moved(tmp_path)

    def refuse(path: Path, data: bytes) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(shinobi.cache, "write_atomically", refuse)
    result = run_recipe(_recipe(), config=load_config({"cache.dir": str(cache)}), cwd=new)
    assert result.ok
    assert [step.status for step in result.steps] == ["cached"]
    assert result.warnings == []
    assert "used_cwd" not in _entries(cache)[0]


def test_an_entry_another_host_made_is_checked_by_the_host_that_used_it_since(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A moved project is looked at by the host that hit it there, which can see it."""
    _, new, cache = _moved(tmp_path)
    (path,) = cache.glob("entries/*/*.json")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "host": "elsewhere"}))
    assert _run(new, cache) == ["cached"]
    code, out, err = in_process(
        capsys, "cache", "ls", "--stale", "--json", "--cache-dir", str(cache)
    )
    assert code == 0, err
    (row,) = json.loads(out)["entries"]
    assert (row["host"], row["used_host"], row["stale"]) == (
        "elsewhere",
        socket.gethostname(),
        False,
    )
