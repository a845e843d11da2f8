"""``command_prefix = "ssh login01"``: every word reaches the Slurm tool as it was meant.

ssh joins the words after the host with spaces and the login host's shell
splits them again, so ``sinfo -o %P|%a|%D|%t`` ran as a pipe (``ninja
doctor``: "sinfo failed: sh: 1: %t: not found") and a workdir with a space
made sbatch open half a script path. The stand-in ``ssh`` here does what ssh
does with its command: ``sh -c "$*"``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, Ninja
from launches import wait_final

from shinobi_slurm.commands import SlurmCommands

SSH = (
    '#!/bin/sh\n# the host, then the command as the remote shell gets it\nshift\nexec sh -c "$*"\n'
)


def _ssh(tmp_path: Path) -> str:
    fake = tmp_path / "bin" / "ssh"
    fake.parent.mkdir()
    fake.write_text(SSH)
    fake.chmod(0o755)
    return str(fake)


def test_words_reach_the_tool_whole_through_an_ssh_hop(tmp_path: Path) -> None:
    commands = SlurmCommands.from_settings({"command_prefix": f"{_ssh(tmp_path)} login01"})
    said = commands.run("printf", ["%s\n", "-o", "%P|%a|%D|%t", "/data/a b/it's.sbatch", "$HOME"])
    assert said.splitlines() == ["-o", "%P|%a|%D|%t", "/data/a b/it's.sbatch", "$HOME"]


def test_a_prefix_that_is_no_ssh_hop_gets_the_words_as_they_are(tmp_path: Path) -> None:
    commands = SlurmCommands.from_settings({"command_prefix": ["env", "LC_ALL=C"]})
    assert commands.run("printf", ["%s\n", "a b", "x|y"]).splitlines() == ["a b", "x|y"]


@pytest.mark.usefixtures("slurm")
def test_compile_submits_through_an_ssh_hop_from_a_directory_with_a_space(
    ninja: Ninja, tmp_path: Path
) -> None:
    from shinobi_slurm.backend import SlurmBackend

    prefix = f"{_ssh(tmp_path)} login01"
    status = SlurmBackend({"command_prefix": prefix}).check()
    assert status.usable, status.detail
    work = tmp_path / "obs 1"
    work.mkdir()
    (work / "shinobi.toml").write_text(f'[backend.slurm]\ncommand_prefix = "{prefix}"\n')
    done = ninja(
        "compile", f"{EXAMPLES}/offload_demo.py:pipe", "--target", "made.ms", "--submit", cwd=work
    )
    assert done.returncode == 0, done.stderr
    found = wait_final(ninja, str(work / ".shinobi" / "pipe" / "handle.json"), cwd=work)
    assert found["state"] == "completed", found["summary"]
    assert (work / "made.ms").exists()
