"""``ninja doctor`` warns of a ``cache.dir`` this user cannot write.

A run checks its cache directory with ``os.access`` and caches nothing when it
cannot write there; doctor now says so first, as a warning (exit 0), naming
the fix. Tests often run as root, which ``os.access`` lets write anywhere but
on a read-only file system, so the unit tests make ``os.access`` refuse one
directory (and only that one); a real read-only directory is tried too when
not root.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process


def _doctor(capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out, err = in_process(capsys, "doctor", "--json")
    assert "Traceback" not in err
    config: dict[str, Any] = json.loads(out)["config"]
    return code, config


def _refuse(monkeypatch: pytest.MonkeyPatch, *denied: Path) -> None:
    """``os.access`` says no to writing in ``denied``, and as it did to everything else."""
    real = os.access
    refused = {str(path) for path in denied}

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if mode & os.W_OK and os.path.abspath(path) in refused:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


def _warning(cache: Path, blocked: Path) -> str:
    return (
        f"the step cache at {cache} cannot be written by this user ({blocked} is not"
        " writable); set cache.dir (from environment variable SHINOBI_CACHE_DIR) to a"
        f" writable directory, or fix the permissions of {blocked} (until then every run"
        " caches nothing)"
    )


def test_a_cache_dir_that_cannot_be_written_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(cache))
    monkeypatch.setenv("SHINOBI_BACKEND_DEFAULT", "native")
    _refuse(monkeypatch, cache)
    code, config = _doctor(capsys)
    assert code == 0
    assert config["problems"] == []
    assert config["warnings"] == [_warning(cache, cache)]


def test_a_cache_dir_not_made_yet_is_judged_by_its_nearest_parent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    cache = shared / "me" / "steps"
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(cache))
    monkeypatch.setenv("SHINOBI_BACKEND_DEFAULT", "native")
    _refuse(monkeypatch, shared)
    code, config = _doctor(capsys)
    assert code == 0
    assert config["warnings"] == [_warning(cache, shared)]
    code, out, _ = in_process(capsys, "doctor")
    assert code == 0
    assert f"  warning: {_warning(cache, shared)}" in out.splitlines()


def test_a_writable_cache_dir_is_no_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / "not" / "made"))
    monkeypatch.setenv("SHINOBI_BACKEND_DEFAULT", "native")
    code, config = _doctor(capsys)
    assert (code, config["warnings"]) == (0, [])


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write in a read-only directory")
def test_a_read_only_cache_dir_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o555)
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(cache))
    monkeypatch.setenv("SHINOBI_BACKEND_DEFAULT", "native")
    try:
        code, config = _doctor(capsys)
    finally:
        cache.chmod(0o755)
    assert (code, config["warnings"]) == (0, [_warning(cache, cache)])


def _inside_warning(cache: Path, what: str, blocked: Path, more: str, then: str) -> str:
    return (
        f"the step cache at {cache} {what} ({blocked}{more} not writable by this user);"
        f" fix the permissions of {blocked} (in a cache shared by a group, its owner can"
        " `chmod -R g+w` it), or set cache.dir (from environment variable SHINOBI_CACHE_DIR)"
        f" to a writable directory (until then {then})"
    )


@pytest.mark.parametrize("where", ["entries", "entries/c8", "memo", "memo/HOST"])
def test_a_directory_in_the_cache_this_user_cannot_write_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    # in a cache shared by a group, another user's entries/ or memo/<host>/ made
    # without group write kept this user from storing anything: doctor checked
    # only the top directory, and said all was well
    import socket

    cache = tmp_path / "cache"
    # memo/ alone matters while this host's directory in it is not made yet
    host = "memo" if where == "memo" else f"memo/{socket.gethostname()}"
    for made in ("entries/c8", "entries/0a", host):
        (cache / made).mkdir(parents=True)
    blocked = cache / where.replace("HOST", socket.gethostname())
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(cache))
    monkeypatch.setenv("SHINOBI_BACKEND_DEFAULT", "native")
    _refuse(monkeypatch, blocked)
    code, config = _doctor(capsys)
    assert code == 0
    if where.startswith("entries"):
        said = _inside_warning(
            cache, "cannot keep results", blocked, " is", "steps run again every time"
        )
    else:
        said = _inside_warning(
            cache,
            "cannot remember the files it has read",
            blocked,
            " is",
            "every run reads its inputs again",
        )
    assert config["warnings"] == [said]


def test_every_shard_of_entries_this_user_cannot_write_is_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    for shard in ("0a", "c8", "ff"):
        (cache / "entries" / shard).mkdir(parents=True)
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(cache))
    monkeypatch.setenv("SHINOBI_BACKEND_DEFAULT", "native")
    _refuse(monkeypatch, cache / "entries" / "0a", cache / "entries" / "ff")
    code, config = _doctor(capsys)
    assert code == 0
    blocked = cache / "entries" / "0a"
    more = " and 1 more there are"
    then = "steps run again every time"
    assert config["warnings"] == [
        _inside_warning(cache, "cannot keep results", blocked, more, then)
    ]
