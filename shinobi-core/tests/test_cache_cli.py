"""``ninja cache``: ``rm`` counts an entry two key prefixes name once,
``rm --step`` takes a nested recipe's steps, and ``ls --stale`` does not judge
an entry another host made (its outputs are out of sight, as ``prune`` knows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process
from pydantic import BaseModel

from shinobi.cli.cache import _is_step
from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


def _entries(cache: Path) -> list[dict[str, Any]]:
    return [json.loads(f.read_text()) for f in sorted(cache.glob("entries/*/*.json"))]


class OutIn(BaseModel):
    out: Path


class OutOut(BaseModel):
    out: File


def _writer(name: str) -> Cab:
    return Cab(
        name,
        ["/bin/sh", "-c", f'echo {name} > "$0"'],
        OutIn,
        OutOut,
        {"out": ParamMeta(positional=True)},
    )


def _cached(tmp_path: Path, recipe: Recipe) -> Path:
    cache = tmp_path / "cache"
    assert run_recipe(recipe, config=load_config({"cache.dir": str(cache)}), cwd=tmp_path).ok
    return cache


def test_cache_rm_of_two_prefixes_of_one_key_removes_and_counts_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = Recipe("two")
    recipe.add_step("one", _writer("one"), out=Path("one.txt"))
    recipe.add_step("two", _writer("two"), out=Path("two.txt"))
    cache = _cached(tmp_path, recipe)
    key = _entries(cache)[0]["key"]
    code, out, err = in_process(capsys, "cache", "rm", key[:8], key[:12], "--cache-dir", str(cache))
    assert code == 0, err
    assert out.strip() == "removed 1 entry"
    assert len(_entries(cache)) == 1


def test_cache_rm_by_step_takes_every_step_of_a_nested_recipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inner = Recipe("inner")
    inner.add_step("a", _writer("a"), out=Path("a.txt"))
    inner.add_step("b", _writer("b"), out=Path("b.txt"))
    outer = Recipe("outer")
    outer.add_step("sub", inner)
    outer.add_step("subway", _writer("subway"), out=Path("subway.txt"))  # starts the same
    cache = _cached(tmp_path, outer)
    assert sorted(e["step"] for e in _entries(cache)) == ["sub.a", "sub.b", "subway"]
    code, out, err = in_process(capsys, "cache", "rm", "--step", "sub", "--cache-dir", str(cache))
    assert code == 0, err
    assert out.strip() == "removed 2 entries"
    assert [e["step"] for e in _entries(cache)] == ["subway"]


@pytest.mark.parametrize(
    ("recorded", "step", "belongs"),
    [
        ("sub", "sub", True),
        ("sub[3]", "sub", True),
        ("sub[1][2]", "sub", True),
        ("sub.a", "sub", True),
        ("sub[2].a[1]", "sub", True),
        ("subway", "sub", False),
        ("sub[x]", "sub", False),
        ("sub.", "sub", False),
        ("other.sub", "sub", False),
    ],
)
def test_which_recorded_names_a_step_takes(recorded: str, step: str, belongs: bool) -> None:
    assert _is_step(recorded, step) is belongs


def test_cache_ls_stale_does_not_judge_another_hosts_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its outputs are usually not visible here: `prune` leaves it alone, and `ls
    --stale` called it STALE all the same."""
    recipe = Recipe("two")
    recipe.add_step("here", _writer("here"), out=Path("here.txt"))
    recipe.add_step("there", _writer("there"), out=Path("there.txt"))
    cache = _cached(tmp_path, recipe)
    for path in cache.glob("entries/*/*.json"):
        data = json.loads(path.read_text())
        if data["step"] == "there":
            path.write_text(json.dumps({**data, "host": "node-elsewhere"}))
    (tmp_path / "here.txt").unlink()
    (tmp_path / "there.txt").unlink()  # as seen from here: not on this host's disk
    at = ("--cache-dir", str(cache))

    code, out, err = in_process(capsys, "cache", "ls", "--stale", "--json", *at)
    assert code == 0, err
    assert {e["step"]: e["stale"] for e in json.loads(out)["entries"]} == {
        "here": True,
        "there": None,
    }
    code, out, err = in_process(capsys, "cache", "ls", "--stale", *at)
    assert code == 0, err
    lines = {line.split()[3]: line for line in out.splitlines()[:-1]}
    assert lines["here"].endswith("STALE")
    assert "not checked here" in lines["there"] and "STALE" not in lines["there"]
    code, out, err = in_process(capsys, "cache", "ls", "--stale", "--all-hosts", "--json", *at)
    assert code == 0, err
    assert all(e["stale"] is True for e in json.loads(out)["entries"])
    code, out, err = in_process(capsys, "cache", "ls", "--json", *at)
    assert code == 0, err
    assert all("stale" not in e for e in json.loads(out)["entries"])


def test_cache_ls_says_which_folders_it_could_not_read_and_lists_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared cache holding another user's entries (umask 077) read as "empty", and
    an ``entries`` that is a file did too: glob() passes over what it may not read."""
    import os

    recipe = Recipe("two")
    recipe.add_step("one", _writer("one"), out=Path("one.txt"))
    recipe.add_step("two", _writer("two"), out=Path("two.txt"))
    cache = _cached(tmp_path, recipe)
    hidden = sorted((cache / "entries").iterdir())[0]
    listdir = os.listdir

    def refusing(path: Any) -> list[str]:
        if str(path) == str(hidden):
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)

    monkeypatch.setattr(os, "listdir", refusing)
    code, out, err = in_process(capsys, "cache", "ls", "--cache-dir", str(cache))
    assert code == 0, err
    assert "1 folder(s) of entries cannot be read by this user" in err
    assert "1 entry in" in out and "empty" not in out

    monkeypatch.setattr(os, "listdir", listdir)
    other = tmp_path / "other"
    other.mkdir()
    (other / "entries").write_text("")
    code, out, err = in_process(capsys, "cache", "ls", "--cache-dir", str(other))
    assert code == 2 and "Not a directory" in err and "empty" not in out


def test_cache_rm_by_step_says_which_projects_and_can_be_tried_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A step's name (``image``) is no project's own: ``--step image`` removed the
    entries of every project using the cache, and said only how many."""
    cache = tmp_path / "cache"
    for project, text in (("one", "first"), ("two", "second")):
        (tmp_path / project).mkdir()
        recipe = Recipe("r")
        recipe.add_step("image", _writer(text), out=Path("image.txt"))
        config = load_config({"cache.dir": str(cache)})
        assert run_recipe(recipe, config=config, cwd=tmp_path / project).ok
    at = ("--cache-dir", str(cache))
    code, out, err = in_process(capsys, "cache", "rm", "--step", "image", "--dry-run", *at)
    assert code == 0, err
    assert out.startswith(f"would remove 2 entries; of 2 projects: {tmp_path / 'one'}, ")
    assert len(_entries(cache)) == 2  # nothing removed
    code, out, err = in_process(capsys, "cache", "rm", "--step", "image", *at)
    assert code == 0, err
    assert out.strip().endswith(f"of 2 projects: {tmp_path / 'one'}, {tmp_path / 'two'}")
    assert _entries(cache) == []


def test_prune_leaves_what_this_user_may_not_read_to_its_owner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a cache a group shares, one member's prune removed another's entries made
    under umask 077 ("unusable") and those whose outputs lie in a private project
    ("outputs gone or changed"): the owner's next run ran every step again."""
    import errno

    from shinobi import cache_entries
    from shinobi.file_digests import DigestMemo

    recipe = Recipe("two")
    recipe.add_step("a", _writer("a"), out=Path("a.txt"))
    recipe.add_step("b", _writer("b"), out=Path("b.txt"))
    cache = _cached(tmp_path, recipe)
    entries = {e["step"]: e["key"] for e in _entries(cache)}
    real_read, real_digest = cache_entries.read_small, DigestMemo.digest

    def read_small(path: str) -> Any:
        if entries["a"] in path:  # root reads every file: stand in for a colleague's
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_read(path)

    def digest(self: DigestMemo, path: str, *args: Any, **kwargs: Any) -> str:
        if path.endswith("b.txt"):  # an output in a project this user may not enter
            return f"unreadable:{errno.EACCES}"
        return real_digest(self, path, *args, **kwargs)

    monkeypatch.setattr(cache_entries, "read_small", read_small)
    monkeypatch.setattr(DigestMemo, "digest", digest)
    at = ("--cache-dir", str(cache))
    code, out, err = in_process(capsys, "cache", "ls", "--stale", *at)
    assert code == 0, err
    assert "another user's: this user may not read it" in out
    assert "not checked here (this user may not read it or its outputs)" in out
    code, out, err = in_process(capsys, "cache", "prune", *at)
    assert code == 0, err
    assert "removed" not in out or "removed 0" in out, out
    assert sorted(e["step"] for e in _entries(cache)) == ["a", "b"]
