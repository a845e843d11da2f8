"""The callers that judge this shell's ``SBATCH_*`` variables ask
:meth:`SlurmCommands.sbatch_environment`, so through an ssh ``command_prefix``
(which sends none of them) a job's timeout is not blamed on a local
``SBATCH_TIMELIMIT``, nor a refusal on local variables."""

from __future__ import annotations

import pytest

from shinobi_slurm import trial
from shinobi_slurm.backend import _timeout_advice
from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.sacct import JobRecord
from shinobi_slurm.sbatch import Option

TIMED_OUT = JobRecord("7", "7", None, "TIMEOUT", None, None, None, None, None, None)


def test_over_ssh_a_timeout_is_not_blamed_on_this_shells_timelimit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SBATCH_TIMELIMIT", "1")
    remote = SlurmCommands.from_settings({"command_prefix": "ssh login01"})
    local = SlurmCommands.from_settings({})
    assert "SBATCH_TIMELIMIT=1" in _timeout_advice(TIMED_OUT, local)
    assert "SBATCH_TIMELIMIT" not in _timeout_advice(TIMED_OUT, remote)


def test_over_ssh_a_refusal_is_not_blamed_on_this_shells_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SBATCH_PARTITION", "nowhere")
    asked: list[object] = []

    def passes(commands: SlurmCommands, options: object, without: object) -> bool:
        asked.append(without)
        return True

    monkeypatch.setattr(trial, "_passes", passes)
    options = [Option("time", "00:05:00")]
    remote = SlurmCommands.from_settings({"command_prefix": "ssh login01"})
    assert trial._blamed_variables(remote, options) == {}
    assert asked == []
    local = SlurmCommands.from_settings({})
    assert trial._blamed_variables(local, options) == {"SBATCH_PARTITION": "nowhere"}


def test_a_compiled_launch_over_ssh_warns_of_no_local_override(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from shinobi_slurm.compile import _warn_of_environment

    monkeypatch.setenv("SBATCH_TIMELIMIT", "1")
    jobs = [[Option("time", "00:05:00")]]
    _warn_of_environment(SlurmCommands.from_settings({"command_prefix": "ssh login01"}), jobs, [])
    assert capsys.readouterr().err == ""
    _warn_of_environment(SlurmCommands.from_settings({}), jobs, [])
    assert "SBATCH_TIMELIMIT" in capsys.readouterr().err
