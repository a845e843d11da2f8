"""A step cache shared by a group: each user's new directories are the group's too.

docs/cache.md says a cache can be shared by a group: a group-owned setgid
directory. The first user (umask 022) made ``entries/``, ``entries/c8/`` and
``memo/<host>/`` in it writable by that user alone, and every other user of the
group could then store nothing. A directory made in a group-writable one is
now made group-writable too (see ``file_digests.make_dirs``).

The users are real ones where the tests run as root: forked processes that
take other uids in one group (the interpreter of a venv under /root could not
be run by a user added for the purpose).
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

import shinobi.file_digests as digests_module
from shinobi.backends.base import Invocation
from shinobi.cache import StepCache
from shinobi.file_digests import make_dirs
from shinobi.steps.result import StepResult

#: Two users of one group, by numbers no account here is expected to have.
GROUP, ALICE, BOB = 61_000, 61_001, 61_002


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The umask most users have: it takes group write from every mkdir."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _shared_dir(path: Path) -> Path:
    """``path`` made as an admin makes a group's shared directory: g+ws."""
    path.mkdir()
    path.chmod(0o2775)
    return path


def test_a_directory_made_in_a_group_writable_one_is_group_writable(
    tmp_path: Path, umask_022: None
) -> None:
    shared = _shared_dir(tmp_path / "shared")
    make_dirs(shared / "entries" / "c8")
    assert _mode(shared / "entries") == _mode(shared / "entries" / "c8") == 0o2775
    private = tmp_path / "private"
    private.mkdir(mode=0o755)
    make_dirs(private / "memo" / "host")
    assert _mode(private / "memo") == _mode(private / "memo" / "host") == 0o755
    make_dirs(shared / "entries")  # there already: left as it is
    (shared / "file").write_text("")
    with pytest.raises(FileExistsError):
        make_dirs(shared / "file")


def _settled(monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    """The memo's clock an hour ahead: what is read is remembered on disk."""
    later = SimpleNamespace(time=lambda: time.time() + 3600)
    if monkeypatch is None:  # in a forked user's process, which ends with it
        digests_module.time = later  # type: ignore[assignment]
    else:
        monkeypatch.setattr(digests_module, "time", later)


def _store_and_remember(cache_dir: Path, data: Path, key: str) -> None:
    """What a run does to the cache: store a result and save what it read. A
    refusal of either fails."""
    cache = StepCache(cache_dir, run_id=key[:8])

    def refused(said: str, topic: str) -> None:
        raise AssertionError(said)

    cache.on_refused = refused
    invocation = Invocation(step="s", argv=("tool",), cwd=str(data.parent), paths=())
    cache.store(key, StepResult(name="s", status="ok", returncode=0), invocation, None)
    assert (cache_dir / "entries" / key[:2] / f"{key}.json").is_file()
    assert cache.memo.digest(str(data)).startswith("file:")
    cache.close()
    assert any(str(data) in p.read_text() for p in cache.memo.root.glob("*.json"))


def test_a_cache_in_a_shared_directory_is_made_group_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_022: None
) -> None:
    _settled(monkeypatch)
    cache = _shared_dir(tmp_path / "cache")
    data = tmp_path / "vis.dat"
    data.write_text("visibilities")
    _store_and_remember(cache, data, "c8" + "0" * 62)
    for made in ("entries", "entries/c8", "memo", f"memo/{socket.gethostname()}"):
        assert _mode(cache / made) == 0o2775, made


def _as_user(uid: int, work: Callable[[], None]) -> int:
    """Run ``work`` in a child process as ``uid`` of :data:`GROUP` (umask 022);
    its exit status: 0 when it did not raise."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgroups([GROUP])
            os.setgid(GROUP)
            os.setuid(uid)
            os.umask(0o022)
            work()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_two_users_of_one_group_share_a_cache() -> None:
    """Alice runs first and makes the cache's directories; Bob, of her group,
    then stores a result in the very shard directory she made, and saves what he
    read in her host's memo directory."""
    # not under pytest's tmp_path, which only root may enter
    base = Path(tempfile.mkdtemp(prefix="shinobi-shared-cache-"))
    try:
        base.chmod(0o755)
        cache = _shared_dir(base / "cache")
        os.chown(cache, 0, GROUP)
        cache.chmod(0o2775)  # chown took the setgid bit
        read = {}
        for user in (ALICE, BOB):
            read[user] = base / f"vis-{user}.dat"
            read[user].write_text(f"visibilities of {user}")
        for user in (ALICE, BOB):
            key = "c8" + f"{user:062x}"

            def work(user: int = user, key: str = key) -> None:
                _settled()
                _store_and_remember(cache, read[user], key)

            assert _as_user(user, work) == 0, f"uid {user} could not use the shared cache"
        host = cache / "memo" / socket.gethostname()
        assert (cache / "entries" / "c8").stat().st_uid == ALICE
        assert host.stat().st_uid == ALICE and host.stat().st_gid == GROUP
    finally:
        shutil.rmtree(base)
