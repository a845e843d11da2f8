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


def test_a_tool_exiting_255_without_an_ssh_hop_is_the_tool_s_failure() -> None:
    """255 is ssh's own failure only when there is an ssh hop: through ``env`` it is
    the tool's answer, not "ssh to the Slurm host failed"."""
    from shinobi_slurm.commands import SlurmError, SlurmUnreachable

    commands = SlurmCommands.from_settings({"command_prefix": ["env", "LC_ALL=C"]})
    with pytest.raises(SlurmError) as caught:
        commands.run("sh", ["-c", "echo 'sh: refused' >&2; exit 255"])
    assert not isinstance(caught.value, SlurmUnreachable)
    assert str(caught.value) == "sh failed: refused"


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


#: A real ssh that cannot connect: nothing listens on port 1 here.
REFUSED_HOP = "ssh -o BatchMode=yes -o ConnectTimeout=5 -p 1 127.0.0.1"
#: A real ssh whose host is not a name at all (.invalid never resolves).
UNNAMED_HOP = "ssh -o BatchMode=yes -o ConnectTimeout=5 nohost.invalid"


def _real_ssh() -> None:
    import shutil

    if shutil.which("ssh") is None:
        pytest.skip("no ssh client here")


def test_a_hop_ssh_cannot_make_is_slurm_unreached_naming_the_hop() -> None:
    from shinobi_slurm.commands import SlurmUnreachable

    _real_ssh()
    refused = SlurmCommands.from_settings({"command_prefix": REFUSED_HOP})
    with pytest.raises(SlurmUnreachable) as caught:
        refused.run("sinfo", [])
    assert caught.value.never_sent and caught.value.transient  # the network: may pass
    assert "Connection refused" in str(caught.value)
    assert f"`{REFUSED_HOP} sinfo` answers" in caught.value.check
    unnamed = SlurmCommands.from_settings({"command_prefix": UNNAMED_HOP, "submit_retry": 60})
    with pytest.raises(SlurmUnreachable) as caught:
        unnamed.submit([], stdin="#!/bin/sh\ntrue\n")  # a wrong name does not pass: no retry
    assert caught.value.never_sent and not caught.value.transient


@pytest.mark.usefixtures("slurm")
def test_submit_cancel_and_status_through_a_hop_that_fails_exit_74_naming_it(
    ninja: Ninja, tmp_path: Path
) -> None:
    _real_ssh()
    hop = {"SHINOBI_BACKEND_SLURM_COMMAND_PREFIX": REFUSED_HOP}
    hop["SHINOBI_BACKEND_SLURM_SUBMIT_RETRY"] = "0"
    target = f"{EXAMPLES}/offload_demo.py:pipe"
    refused = ninja("compile", target, "--target", "m.ms", "--submit", **hop)
    assert refused.returncode == 74, refused.stderr
    assert f"check that `{REFUSED_HOP} sinfo` answers" in refused.stderr
    assert "nothing was submitted" in refused.stderr and not list(tmp_path.glob("*.ms"))
    launched = ninja("compile", target, "--target", "m.ms", "--submit")
    assert launched.returncode == 0, launched.stderr
    try:
        for command in ("status", "cancel"):
            done = ninja(command, "pipe", **hop)
            assert done.returncode == 74, (command, done.stderr)
            said = done.stdout + done.stderr  # status says it under its table
            assert f"`{REFUSED_HOP} sinfo` answers" in said, (command, said)
    finally:
        ninja("cancel", "pipe")
