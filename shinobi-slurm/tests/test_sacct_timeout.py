"""A sacct that does not answer in time is blamed on slurmdbd, which it asks, not on
slurmctld: an admin sent to check `sinfo` found it answering and looked no further."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Ninja
from test_status_errors import handle

from shinobi_slurm.commands import CHECK_ACCOUNTING, CHECK_CONTROLLER, SlurmCommands, SlurmError

SLOW = "#!/bin/sh\nsleep 30\n"


def _slow(tmp_path: Path, tool: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / tool).write_text(SLOW)
    (bin_dir / tool).chmod(0o755)


def test_a_sacct_timeout_names_slurmdbd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _slow(tmp_path, "sacct")
    _slow(tmp_path, "squeue")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    commands = SlurmCommands(timeout=0.3)
    with pytest.raises(SlurmError) as sacct:
        commands.run("sacct", ["-X"])
    assert "is slurmdbd up?" in str(sacct.value) and sacct.value.check == CHECK_ACCOUNTING
    with pytest.raises(SlurmError) as squeue:
        commands.run("squeue", ["-h"])
    assert "is slurmctld up?" in str(squeue.value) and squeue.value.check == CHECK_CONTROLLER


def test_status_names_slurmdbd_when_sacct_times_out(ninja: Ninja, tmp_path: Path) -> None:
    _slow(tmp_path, "sacct")
    shown = ninja(
        "status",
        str(handle(tmp_path, "12")),
        PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        SHINOBI_BACKEND_SLURM_COMMAND_TIMEOUT="1",
    )
    assert shown.returncode == 74, shown.stdout + shown.stderr
    assert "sacct did not answer within 1 s (is slurmdbd up?)" in shown.stdout
    assert CHECK_ACCOUNTING in shown.stdout and "slurmctld" not in shown.stdout
