"""Options Slurm would reject are refused before anything is submitted, live:
``sbatch --test-only`` once per distinct set of options."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES, RECIPES, Ninja

pytestmark = pytest.mark.usefixtures("slurm")


def queued_for(recipe: str) -> list[str]:
    """Queued jobs whose comment (recipe/step, as compile writes it) names ``recipe``."""
    out = subprocess.run(
        ["squeue", "-h", "-o", "%k"], capture_output=True, text=True, check=True
    ).stdout
    return [comment for comment in out.split() if comment.startswith(f"{recipe}/")]


def test_a_partition_slurm_does_not_have_is_refused_before_any_step(
    ninja: Ninja, tmp_path: Path
) -> None:
    (tmp_path / "shinobi.toml").write_text(
        '[backend.slurm]\nsbatch_opts = ["--partition=nosuch"]\n'
    )
    done = ninja(
        "run", f"{EXAMPLES}/offload_demo.py:pipe", "--target", str(tmp_path / "m.ms"), "-b", "slurm"
    )
    assert done.returncode == 2, done.stderr
    assert "Slurm would refuse step 'make'" in done.stderr
    assert "Invalid partition" in done.stderr and "nothing was submitted" in done.stderr
    assert not (tmp_path / "m.ms").exists()


def test_a_launch_with_a_step_no_node_can_hold_submits_nothing(
    ninja: Ninja, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    done = ninja(
        "compile",
        f"{RECIPES}/oversized.py:oversized",
        "--marker",
        str(marker),
        "--container-runtime",
        "none",
        "--submit",
    )
    assert done.returncode == 2, done.stderr
    assert "Slurm would refuse step 'huge'" in done.stderr
    assert not list((tmp_path / ".shinobi").glob("oversized/*/handle.json"))  # no launch
    assert not marker.exists() and queued_for("oversized") == []
