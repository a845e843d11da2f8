"""What the digest memo remembers."""

from __future__ import annotations

import errno
import os
import socket
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

import shinobi.file_digests as digests_module
from shinobi.config import load_config
from shinobi.file_digests import DigestMemo
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


def _remembered(memo_root: Path, path: Path) -> bool:
    """Whether a fresh memo (another run) would trust a remembered digest of ``path``."""
    return DigestMemo(memo_root)._known(str(path)) is not None


def _stored_entry(tmp_path: Path) -> tuple[Path, Path]:
    """A cache holding one entry whose output ``image.fits`` a run has just written."""
    from shinobi.backends.base import Invocation, PathUse
    from shinobi.cache import StepCache
    from shinobi.steps import Cab
    from shinobi.steps.result import StepResult

    product = tmp_path / "image.fits"
    product.write_bytes(b"SIMPLE  =                    T" * 100)
    invocation = Invocation(
        step="image",
        argv=("wsclean",),
        cwd=str(tmp_path),
        paths=(PathUse(str(product), "output", "restored", "file"),),
    )
    root = tmp_path / "cache"
    store = StepCache(root, run_id="r1")
    cab = Cab("wsclean", ["wsclean"])
    key = store.key(cab, invocation, "native")
    assert key is not None
    store.store(key, StepResult(name="image", status="ok", returncode=0), invocation, cab)
    store.close()  # written just now: remembered for that run only
    return root, product


@pytest.mark.parametrize("args", [["ls", "--stale"], ["prune"], ["prune", "--dry-run"]])
def test_cache_commands_remember_the_outputs_they_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    # `ninja cache ls --stale` and `prune` read every entry's outputs (a 13 GB
    # image cube, a Measurement Set): done again on every call, a prune of a
    # real cache would re-read terabytes. What they read is remembered, as a
    # run remembers what it reads.
    import socket

    from click.testing import CliRunner

    from shinobi.cli.cache import group

    root, product = _stored_entry(tmp_path)
    memo_root = root / "memo" / socket.gethostname()
    assert not _remembered(memo_root, product)
    st = os.stat(product)
    later = max(st.st_mtime_ns, st.st_ctime_ns) / 1e9 + 10
    monkeypatch.setattr(time, "time", lambda: later)
    result = CliRunner().invoke(group, [*args, "--cache-dir", str(root)])
    assert result.exit_code == 0, result.output
    assert "STALE" not in result.output and "outputs gone" not in result.output
    assert _remembered(memo_root, product)


def _settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo's clock an hour ahead: every file written here has settled, and is
    remembered on disk (see RACY_SECONDS)."""
    later = time.time() + 3600
    monkeypatch.setattr(digests_module, "time", SimpleNamespace(time=lambda: later))


def _refuse_shard(
    monkeypatch: pytest.MonkeyPatch, shard: Path | None, error: int = errno.EACCES
) -> None:
    """Writing the memo shard ``shard`` (None: every one) fails with ``error``, naming
    a temporary file as a failed write does; every other write works."""
    real = digests_module.write_atomically

    def write(path: Path, data: bytes, *, fsync: bool = False) -> None:
        if shard is None or path == shard:
            raise OSError(error, os.strerror(error), str(path.parent / f".{path.name}.tmp"))
        real(path, data, fsync=fsync)

    monkeypatch.setattr(digests_module, "write_atomically", write)


def test_a_shard_the_disk_refuses_costs_only_its_own_digests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # save() stopped at the first shard it could not write: every shard after it
    # was lost too, and each later run read those files again
    _settled(monkeypatch)
    memo_root = tmp_path / "memo"
    memo = DigestMemo(memo_root)
    files = []
    for name in ("a", "b", "c", "d"):
        (tmp_path / name).mkdir()
        files.append(tmp_path / name / "vis.dat")
        files[-1].write_text(name)
    shards = {memo._shard_path(memo._shard_of(str(f))) for f in files}
    assert len(shards) > 1
    refused = sorted(shards)[0]
    for f in files:
        memo.digest(str(f))
    with monkeypatch.context() as disk:
        _refuse_shard(disk, refused)
        with pytest.raises(PermissionError):
            memo.save()
    kept = [f for f in files if memo._shard_path(memo._shard_of(str(f))) != refused]
    assert all(_remembered(memo_root, f) for f in kept)
    assert not any(_remembered(memo_root, f) for f in files if f not in kept)
    memo.save()  # what was refused is still there to be saved
    assert all(_remembered(memo_root, f) for f in files)


class WriteIn(BaseModel):
    out: File


class WriteOut(BaseModel):
    out: File


writer = Cab(
    "writer",
    ["sh", "-c", 'echo made > "$0"'],
    WriteIn,
    WriteOut,
    {"out": ParamMeta(positional=True)},
)


@pytest.mark.parametrize(
    ("error", "fix"),
    [
        (errno.ENOSPC, "free space there, or set cache.dir"),
        (errno.EACCES, "`chmod g+w` it), or set cache.dir"),
        (errno.EROFS, "read-only file system: mount it writable, or set cache.dir"),
    ],
)
def test_a_memo_the_disk_refuses_is_said_once_with_its_cause_and_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int, fix: str
) -> None:
    # a memo that could not be saved was said nowhere: every later "cached" run
    # read all its inputs again (10 GB) without a word
    _settled(monkeypatch)
    _refuse_shard(monkeypatch, None, error)
    recipe = Recipe("two")
    recipe.add_step("first", writer, out="a.txt")
    recipe.add_step("second", writer, out="b.txt")
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    result = run_recipe(recipe, cwd=tmp_path, config=config)
    assert result.ok, result.error
    said = [w for w in result.warnings if "cannot remember the files it has read" in w]
    assert len(said) == 1, result.warnings
    assert os.strerror(error) in said[0] and fix in said[0]
    assert "read them again" in said[0]
    if error == errno.EACCES:  # the directory that refused, not a temporary file in it
        host_dir = tmp_path / "cache" / "memo" / socket.gethostname()
        assert f"Permission denied: {host_dir})" in said[0]


def test_a_memo_the_disk_refuses_is_said_by_the_cache_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from shinobi.cli.cache import group

    root, _ = _stored_entry(tmp_path)
    _settled(monkeypatch)
    _refuse_shard(monkeypatch, None, errno.ENOSPC)
    result = CliRunner().invoke(group, ["ls", "--stale", "--cache-dir", str(root)])
    assert result.exit_code == 0, result.output
    said = "cannot remember the files it has read (No space left on device)"
    assert said in result.stderr


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file hashed from now on, in order."""
    read: list[str] = []
    real = digests_module.hash_file

    def hashing(path: str, stopping: Any = None) -> str:
        read.append(path)
        return real(path, stopping)

    monkeypatch.setattr(digests_module, "hash_file", hashing)
    return read


def test_a_directory_of_many_files_is_remembered_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one shard per directory, capped at MAX_MEMO_SHARD: a Measurement Set of
    # 10,000 files had half of them read again on every "cached" run
    monkeypatch.setattr(digests_module, "MAX_MEMO_SHARD", 50)
    _settled(monkeypatch)
    ms = tmp_path / "big.ms"
    ms.mkdir()
    for i in range(300):
        (ms / f"table.f{i}").write_text(str(i))
    memo = DigestMemo(tmp_path / "memo")
    digest = memo.digest(str(ms))
    memo.save()
    read = _reads(monkeypatch)
    assert DigestMemo(tmp_path / "memo").digest(str(ms)) == digest
    assert read == []


def _in_one_shard(memo: DigestMemo, directory: Path, count: int) -> list[Path]:
    """``count`` files in ``directory`` that share a memo shard, written in order."""
    chosen: list[Path] = []
    names = (directory / f"f{i}" for i in range(10_000))
    first = next(names)
    chosen.append(first)
    chosen += [p for p in names if memo._shard_of(str(p)) == memo._shard_of(str(first))][
        : count - 1
    ]
    for path in chosen:
        path.write_text(path.name)
    return chosen


def test_a_full_shard_forgets_what_was_learnt_longest_ago(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a path learnt again kept its old place in the shard, first to go when it
    # overflowed: the file just read was the one forgotten
    monkeypatch.setattr(digests_module, "MAX_MEMO_SHARD", 3)
    _settled(monkeypatch)
    memo_root = tmp_path / "memo"
    memo = DigestMemo(memo_root)
    first, second, third, fourth = _in_one_shard(memo, tmp_path, 4)
    for path in (first, second, third):
        memo.digest(str(path))
    memo.save()
    first.write_text("changed")
    memo.digest(str(first))
    memo.digest(str(fourth))
    memo.save()
    assert [_remembered(memo_root, p) for p in (first, second, third, fourth)] == [
        True,
        False,
        True,
        True,
    ]


def test_an_older_memo_is_used_and_moved_by_prune(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memo of one shard per directory (``xx.json``) still spares its files a read."""
    import hashlib
    import json

    _settled(monkeypatch)
    data = tmp_path / "data"
    data.mkdir()
    files = [data / f"vis{i}.dat" for i in range(20)]
    for path in files:
        path.write_text(path.name)
    scratch = DigestMemo(tmp_path / "scratch")
    entries = {}
    for path in files:
        st = os.stat(path)
        digest = scratch.digest(str(path)).removeprefix("file:")
        entries[str(path)] = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        entries[str(path)].append(digest)
    memo_root = tmp_path / "memo"
    memo_root.mkdir()
    older = memo_root / f"{hashlib.sha1(str(data).encode()).hexdigest()[:2]}.json"
    older.write_text(json.dumps({"format": 1, "entries": entries}))
    read = _reads(monkeypatch)
    memo = DigestMemo(memo_root)
    assert memo.digest(str(files[0])) == f"file:{entries[str(files[0])][5]}"
    assert read == []
    (data / "new.dat").write_text("new")
    memo.digest(str(data / "new.dat"))
    memo.save()  # a new shard is written, with what the older one knew of its files
    read.clear()
    assert DigestMemo(memo_root).prune() == 0
    assert not older.exists()
    memo = DigestMemo(memo_root)
    for path in files:
        memo.digest(str(path))
    assert read == []


def test_a_file_reached_by_another_spelling_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /x/p3/../data/big.ms, /x/data/big.ms and data/big.ms from another project
    # were three names, each read in full
    data = tmp_path / "data"
    (data / "big.ms").mkdir(parents=True)
    (data / "big.ms" / "table.f0").write_text("visibilities")
    (data / "obs.fits").write_text("pixels")
    (tmp_path / "p3").mkdir()
    memo = DigestMemo(None)
    read = _reads(monkeypatch)
    digest = memo.digest(f"{tmp_path}/p3/../data/big.ms")
    fits = memo.digest(f"{tmp_path}/p3/../data//./obs.fits")
    assert len(read) == 2
    assert memo.digest(str(data / "big.ms")) == digest
    assert memo.digest(str(data / "big.ms" / "table.f0")).startswith("file:")
    monkeypatch.chdir(tmp_path / "p3")
    assert memo.digest("../data/big.ms") == digest
    assert memo.digest("../data/obs.fits") == fits
    assert len(read) == 2


def test_a_name_that_a_link_makes_two_files_reads_each_as_it_is(tmp_path: Path) -> None:
    """Through the link, ``a/link/../x`` is ``deep/x``, though it reads as ``a/x``:
    one name for two files, which the stat signature tells apart."""
    (tmp_path / "deep" / "sub").mkdir(parents=True)
    (tmp_path / "deep" / "x").write_text("deep")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x").write_text("a")
    (tmp_path / "a" / "link").symlink_to(tmp_path / "deep" / "sub")
    alone = DigestMemo(None)
    own = {name: alone.digest(str(tmp_path / name / "x")) for name in ("deep", "a")}
    assert own["deep"] != own["a"]
    memo = DigestMemo(None)
    for _ in range(2):
        assert memo.digest(f"{tmp_path}/a/link/../x") == own["deep"]
        assert memo.digest(f"{tmp_path}/a/x") == own["a"]


def test_a_large_read_is_remembered_at_once_not_when_the_run_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # saved only when the run ended: a run killed hours in (kill -9, out of
    # memory, a node lost) read every input again next time
    from shinobi.backends.base import Invocation, PathUse
    from shinobi.cache import StepCache

    monkeypatch.setattr(digests_module, "LARGE_READ", 12)
    _settled(monkeypatch)
    small, large = tmp_path / "small.dat", tmp_path / "large.dat"
    small.write_text("1234")
    large.write_text("1234567890123")
    cache = StepCache(tmp_path / "cache")

    def key(path: Path) -> None:
        uses = (PathUse(str(path), "input", "data", "file"),)
        invocation = Invocation(step="s", argv=("tool",), cwd=str(tmp_path), paths=uses)
        assert cache.key(Cab("tool", ["tool"]), invocation, "native") is not None

    key(small)
    assert not _remembered(cache.memo.root, small)  # a small read waits for the end
    key(large)
    assert _remembered(cache.memo.root, large) and _remembered(cache.memo.root, small)


def test_a_save_while_other_threads_learn_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save mid-run writes outside the lock other threads' digests take; what it
    writes stays known to them meanwhile (else read again), and what they learn
    meanwhile, in the very shard being written, is kept for the next save (it
    was dropped with the shard's fresh entries once written)."""
    import threading

    _settled(monkeypatch)
    memo_root = tmp_path / "memo"
    memo = DigestMemo(memo_root)
    first, second = _in_one_shard(memo, tmp_path, 2)
    digest = memo.digest(str(first))
    seen: list[str] = []
    real = digests_module.write_atomically

    def learn_meanwhile() -> None:
        seen.append(memo.digest(str(first)))
        memo.digest(str(second))

    def write(path: Path, payload: bytes, *, fsync: bool = False) -> None:
        if not seen:
            other = threading.Thread(target=learn_meanwhile)
            other.start()
            other.join(timeout=10)
            assert not other.is_alive(), "the memo's lock was held over a write"
        real(path, payload, fsync=fsync)

    monkeypatch.setattr(digests_module, "write_atomically", write)
    read = _reads(monkeypatch)
    memo.save()
    assert seen == [digest] and read == [str(second)]
    memo.save()
    assert _remembered(memo_root, first) and _remembered(memo_root, second)
