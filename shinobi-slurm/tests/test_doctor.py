"""``ninja doctor`` and ``ninja backends`` ask slurm about its
table's values, which its engine check never read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Ninja

from shinobi.errors import ConfigError
from shinobi_slurm.backend import SlurmBackend


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"poll_max": "fast"}, r"^\[backend\.slurm\] poll_max must be a number"),
        ({"sbatch_opts": '"--x'}, r"^\[backend\.slurm\] sbatch_opts"),
        ({"command_timeout": 0}, r"^\[backend\.slurm\] command_timeout must be more than 0"),
        ({"status_interval": 0.1}, r"^\[backend\.slurm\] status_interval must be at least"),
    ],
)
def test_check_settings_refuses_what_a_run_would(settings: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        SlurmBackend.check_settings(settings)
    SlurmBackend.check_settings({})


def test_doctor_flags_a_bad_slurm_value_and_exits_2(ninja: Ninja, tmp_path: Path) -> None:
    """doctor said "ok slurm" and exited 0; the next ``-b slurm`` run was refused."""
    (tmp_path / "shinobi.toml").write_text('[backend.slurm]\npoll_max = "fast"\n')
    found = ninja("doctor", "--json")
    assert found.returncode == 2, found.stderr
    report = json.loads(found.stdout)
    where = f"(poll_max is set in project file {tmp_path / 'shinobi.toml'})"
    assert any(
        p.startswith("[backend.slurm] poll_max") and p.endswith(where)
        for p in report["config"]["problems"]
    )
    listed = ninja("backends", "--json")
    (row,) = [r for r in json.loads(listed.stdout) if r["name"] == "slurm"]
    assert row["usable"] is False and str(row["detail"]).endswith(where)


@pytest.mark.usefixtures("slurm")
def test_doctor_asks_slurm_whether_it_takes_the_configured_sbatch_opts(
    ninja: Ninja, tmp_path: Path
) -> None:
    """A mistyped partition passed doctor ("ok slurm", exit 0) while Slurm refused
    every submission: well-formed options are now tried with ``sbatch --test-only``."""
    toml = tmp_path / "shinobi.toml"
    toml.write_text('[backend.slurm]\nsbatch_opts = ["--partition=dbug"]\n')
    found = ninja("doctor", "--json")
    assert found.returncode == 2, found.stderr
    (problem,) = json.loads(found.stdout)["config"]["problems"]
    assert problem.startswith("[backend.slurm] sbatch_opts: Slurm refuses them"), problem
    assert "dbug" in problem and f"(sbatch_opts is set in project file {toml})" in problem
    toml.write_text('[backend.slurm]\nsbatch_opts = ["--time=00:05:00"]\n')
    fine = ninja("doctor", "--json")
    assert fine.returncode == 0, fine.stdout
