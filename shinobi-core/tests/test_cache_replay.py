"""What a step-cache hit hands on."""

from __future__ import annotations

from pathlib import Path

from shinobi.backends.base import Invocation, PathUse
from shinobi.cache import StepCache
from shinobi.steps import Cab
from shinobi.steps.result import StepResult

DIGEST = "sha256:" + "ab" * 32


def _invocation(tmp_path: Path) -> Invocation:
    (tmp_path / "in.txt").write_text("visibilities")
    return Invocation(
        step="image",
        argv=("wsclean", "in.txt"),
        cwd=str(tmp_path),
        image="wsclean:3.4",
        paths=(PathUse(str(tmp_path / "in.txt"), "input", "ms", "file"),),
    )


def test_a_hit_keeps_the_image_digest_the_result_was_made_with(tmp_path: Path) -> None:
    # A fully cached re-run's manifest must still say which image made each
    # result (provenance pins images by digest): the entry has it, the hit
    # must hand it on.
    store = StepCache(tmp_path / "cache", run_id="first")
    cab = Cab("wsclean", ["wsclean"], image="wsclean:3.4")
    invocation = _invocation(tmp_path)
    key = store.key(cab, invocation, "docker")
    assert key is not None
    made = StepResult(name="image", status="ok", returncode=0, backend="docker")
    made.details["image_digest"] = DIGEST
    store.store(key, made, invocation, cab)
    hit = StepCache(tmp_path / "cache", run_id="second").lookup(key, "image", str(tmp_path))
    assert hit is not None and hit.status == "cached"
    assert hit.details["image_digest"] == DIGEST
    assert hit.details["cached_from"] == "first"
