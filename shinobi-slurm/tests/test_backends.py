"""``ninja backends`` says slurm is unusable when no node of an up partition can run a job.

A partition that is up but whose nodes are all down or drained takes jobs
that then wait for ever; ``ninja backends`` said "ok" and ``ninja run
--backend slurm`` sat silent. Every Slurm command here is a stand-in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi_slurm.backend import SlurmBackend

STAND_IN = """#!/bin/sh
case "$1" in
  sbatch) echo "slurm-wlm 22.05.8" ;;
  sinfo) printf '%s' "$SINFO" ;;
  sacct) ;;
esac
"""


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sinfo: str):  # type: ignore[no-untyped-def]
    fake = tmp_path / "slurm"
    fake.write_text(STAND_IN)
    fake.chmod(0o755)
    monkeypatch.setenv("SINFO", sinfo)
    return SlurmBackend({"command_prefix": [str(fake)]}).check()


@pytest.mark.parametrize(
    "sinfo", ["debug*|up|1|drain\n", "debug*|up|2|down*\nlong|up|1|drng\n", "debug*|up|1|idle*\n"]
)
def test_no_node_that_can_run_a_job_is_not_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sinfo: str
) -> None:
    found = _check(tmp_path, monkeypatch, sinfo)
    assert not found.usable
    assert "no node can run a job" in found.detail and "\n" not in found.detail


@pytest.mark.parametrize(
    ("sinfo", "said"),
    [
        ("debug*|up|1|idle\n", "partitions up: debug"),
        ("debug*|up|1|drain\ndebug*|up|3|mix\nlong|down|2|idle\n", "partitions up: debug"),
    ],
)
def test_a_partition_with_a_working_node_is_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sinfo: str, said: str
) -> None:
    found = _check(tmp_path, monkeypatch, sinfo)
    assert found.usable and found.detail.endswith(said)


def test_no_partition_up_is_not_usable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = _check(tmp_path, monkeypatch, "debug*|down|1|idle\n")
    assert not found.usable and "no partition is up" in found.detail
