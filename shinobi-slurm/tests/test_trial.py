"""A mistyped partition is refused naming the partitions Slurm has.

Slurm says only "Invalid partition name specified"; the fix is a name the
user has to look up, so the refusal names them (one ``sinfo`` call, made
only when Slurm refused a partition).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, Ninja


@pytest.mark.usefixtures("slurm")
def test_a_mistyped_partition_names_the_partitions_there_are(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "shinobi.toml").write_text('[backend.slurm]\nsbatch_opts = ["-p", "dbug"]\n')
    done = ninja(
        "run", f"{EXAMPLES}/offload_demo.py:pipe", "--target", str(tmp_path / "m.ms"), "-b", "slurm"
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "no partition 'dbug': partitions here are debug" in lines[0]
    assert "fix [backend.slurm] sbatch_opts" in lines[0]
