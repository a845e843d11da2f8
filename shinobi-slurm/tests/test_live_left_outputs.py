"""A compiled launch's job that was cancelled, or failed, while it wrote its product:
``ninja status`` names the part it left under the product's name, on the real Slurm.

No ninja watches a compiled launch's jobs, so nothing said a cancelled job's
half-written product was one; ``ninja run -b slurm`` says it of its own jobs
(see test_live_backend.py).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from conftest import RECIPES, Ninja
from launches import submit, wait_final

pytestmark = pytest.mark.usefixtures("slurm")


def test_a_job_cancelled_while_writing_has_its_part_named_by_status(
    ninja: Ninja, tmp_path: Path
) -> None:
    marker, out = tmp_path / "started", tmp_path / "image.fits"
    launch = submit(ninja, f"{RECIPES}/sleepy.py:half", "--marker", str(marker), "--out", str(out))
    handle = json.loads(Path(launch["handle"]).read_text())
    (job,) = handle["jobs"]
    assert job["details"]["writes"] == [str(out)]  # the marker is an input: not its to write
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.2)
    subprocess.run(["scancel", job["job_id"]], check=True)
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "cancelled", found["summary"]
    assert f"it was cancelled after writing {str(out)!r}" in found["summary"]
    assert "it may be incomplete" in found["summary"]
    assert out.read_text() == "part\n"  # said, not moved


def test_a_failed_job_has_only_what_it_wrote_named(ninja: Ninja, tmp_path: Path) -> None:
    """``own`` wrote part of its product and exited 3: named. ``handed`` failed on the
    file ``made`` wrote, stamped after the launch began: not named, it is made's."""
    own, made = tmp_path / "own.fits", tmp_path / "made.fits"
    target = f"{RECIPES}/failing.py:partial"
    launch = submit(ninja, target, "--made", str(made), "--own", str(own), cwd=tmp_path)
    found = wait_final(ninja, launch["handle"], cwd=tmp_path)
    assert found["state"] == "failed", found["summary"]
    summary = found["summary"]
    assert f"step 'own': it failed after writing {str(own)!r}" in summary
    assert str(made) not in summary and "step 'handed':" not in summary.replace(
        "step 'handed' failed", ""
    )
    text = ninja("status", launch["handle"], cwd=tmp_path)
    assert text.returncode == 1
    assert f"it failed after writing {str(own)!r}" in " ".join(text.stdout.split())


def test_a_failed_array_task_has_its_own_slice_named_and_no_other(
    ninja: Ninja, tmp_path: Path
) -> None:
    """A scatter compiled as one job array: the failed slice's part is named by
    its slice, the slices that completed are whole and are not."""
    images = [tmp_path / f"{name}.fits" for name in ("a", "b", "c")]
    paths = [word for image in images for word in ("--paths", str(image))]
    launch = submit(ninja, f"{RECIPES}/failing.py:slices", *paths, cwd=tmp_path)
    handle = json.loads(Path(launch["handle"]).read_text())
    (job,) = handle["jobs"]
    assert job["details"]["slices"] == [{"writes": [str(image)]} for image in images]
    found = wait_final(ninja, launch["handle"], cwd=tmp_path)
    assert found["state"] == "failed", found["summary"]
    (step,) = found["steps"]
    assert step["tasks"] == {"completed": 2, "failed": 1}
    assert [(t["task"], t["phase"]) for t in step["unfinished_tasks"]] == [(1, "failed")]
    summary = found["summary"]
    assert f"step 'image[1]': it failed after writing {str(images[1])!r}" in summary
    assert str(images[0]) not in summary and str(images[2]) not in summary
    assert images[1].read_text() == "part\n"  # said, not moved
