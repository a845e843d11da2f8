"""What the digest memo remembers."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from shinobi.file_digests import DigestMemo


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
