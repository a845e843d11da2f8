"""``SBATCH_*`` variables of this shell, when ``command_prefix`` runs sbatch over ssh.

ssh passes the remote command no environment but what ``SendEnv`` (ssh_config)
and the host's ``AcceptEnv`` allow, none by default: a ``SBATCH_TIMELIMIT=1``
of the local shell never reaches the remote sbatch. ninja still warned that it
"overrides the '#SBATCH --time=...' line", and that ``SBATCH_JOB_NAME`` "is
ignored: --job-name is set by ninja", judging variables sbatch never read.
Through ssh they are now not judged; one warning says they do not reach sbatch
and that the login host's own ``SBATCH_*`` variables, which do, ninja cannot see.
A prefix that is no ssh hop keeps the environment, and the warnings.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from shinobi_slurm import commands as commands_module
from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.sbatch import Option, overriding_environment

TIME = [Option("time", "00:05:00")]
JOBS = [[Option("job-name", "shinobi-x"), *TIME]]
ENVIRON = {"SBATCH_TIMELIMIT": "1", "SLURM_HINT": "nomultithread", "PATH": "/bin", "HOME": "/h"}

#: A stand-in ssh: the host, then the command as the remote shell runs it (here, locally).
SSH = '#!/bin/sh\nshift\nexec sh -c "$*"\n'
#: A stand-in sbatch that prints the SBATCH_* variables it was given, and a job id.
SBATCH = '#!/bin/sh\nenv | grep "^SBATCH_" | sort >&2\necho 42\n'


@pytest.mark.parametrize(
    "prefix", ["ssh -o BatchMode=yes login01", "/usr/bin/ssh login01", "timeout 30 ssh login01"]
)
def test_through_ssh_no_variable_of_this_shell_is_judged(prefix: str) -> None:
    commands = SlurmCommands.from_settings({"command_prefix": prefix})
    seen = commands.sbatch_environment(ENVIRON)
    assert seen == {"PATH": "/bin", "HOME": "/h"}
    assert overriding_environment(seen, JOBS, TIME) == []


@pytest.mark.parametrize("prefix", [None, "env LC_ALL=C", "sudo -E -u slurmuser"])
def test_without_ssh_the_variables_are_judged_as_before(prefix: str | None) -> None:
    commands = SlurmCommands.from_settings({"command_prefix": prefix})
    seen = commands.sbatch_environment(ENVIRON)
    assert seen == ENVIRON
    [said] = overriding_environment(seen, JOBS, TIME)
    assert said.startswith("SBATCH_TIMELIMIT=1 in the environment overrides")


def _bin(tmp_path: Path) -> Path:
    where = tmp_path / "bin"
    where.mkdir()
    for name, text in (("ssh", SSH), ("sbatch", SBATCH)):
        (where / name).write_text(text)
        (where / name).chmod(0o755)
    return where


def _submit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, prefix: str
) -> list[str]:
    """The warnings of two submissions with ``SBATCH_JOB_NAME`` and ``SBATCH_PARTITION`` set."""
    where = _bin(tmp_path)
    monkeypatch.setenv("PATH", f"{where}:/usr/bin:/bin")
    monkeypatch.setenv("SBATCH_JOB_NAME", "someone-else")
    monkeypatch.setenv("SBATCH_PARTITION", "debug")
    monkeypatch.setattr(commands_module, "_WARNED", set())
    commands = SlurmCommands.from_settings({"command_prefix": prefix.format(bin=where)})
    with caplog.at_level(logging.WARNING, logger="shinobi_slurm"):
        assert commands.submit(["job.sh"]) == "42"
        assert commands.submit(["job.sh"]) == "42"
    return [r.getMessage() for r in caplog.records]


def test_through_ssh_one_warning_says_the_variables_do_not_reach_sbatch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    [said] = _submit(tmp_path, monkeypatch, caplog, "{bin}/ssh login01")
    assert said.startswith("shinobi: SBATCH_JOB_NAME, SBATCH_PARTITION in this environment do")
    assert "not reach sbatch" in said and "over ssh" in said and "SendEnv" in said
    assert "login environment" in said and "ninja cannot see them" in said
    assert "is ignored" not in said and "\n" not in said


def test_without_ssh_an_owned_variable_is_still_said_to_be_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    [said] = _submit(tmp_path, monkeypatch, caplog, "env LC_ALL=C")
    assert said.startswith("shinobi: SBATCH_JOB_NAME is ignored: --job-name is set by ninja")


def test_nothing_is_said_through_ssh_when_no_variable_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(commands_module, "_WARNED", set())
    for name in list(os.environ):
        if name.startswith(("SBATCH_", "SLURM_")):
            monkeypatch.delenv(name)
    where = _bin(tmp_path)
    monkeypatch.setenv("PATH", f"{where}:/usr/bin:/bin")
    commands = SlurmCommands.from_settings({"command_prefix": f"{where}/ssh login01"})
    with caplog.at_level(logging.WARNING, logger="shinobi_slurm"):
        assert commands.submit(["job.sh"]) == "42"
    assert caplog.records == []
