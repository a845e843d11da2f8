"""A Slurm tool missing on this host is said as such, never as Slurm refusing the step."""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi_slurm.commands import SlurmCommands, SlurmError
from shinobi_slurm.sbatch import Option
from shinobi_slurm.trial import SlurmWouldRefuse, refuse_what_slurm_would


def test_a_missing_sbatch_is_not_a_refusal_of_the_step() -> None:
    """It read "Slurm would refuse step 'make' (sbatch is not installed here...); fix
    [backend.slurm] sbatch_opts or the step's declared resources", exit 2."""
    commands = SlurmCommands(prefix=("/nonexistent/bin/ssh", "login01"))
    with pytest.raises(SlurmError) as raised:
        refuse_what_slurm_would(commands, [("make", [Option("mem", "1M")])])
    assert not isinstance(raised.value, SlurmWouldRefuse)
    said = str(raised.value)
    assert "is not installed here" in said and "sbatch_opts" not in said
    assert raised.value.exit_code == 74


def test_a_refused_option_is_named_not_the_help_hint_after_it(tmp_path: Path) -> None:
    """sbatch ends with 'Try "sbatch --help" for more information': the line before says what."""
    fake = tmp_path / "sbatch"
    fake.write_text(
        "#!/bin/sh\necho \"sbatch: unrecognized option '--partiton=debug'\" >&2\n"
        "echo 'Try \"sbatch --help\" for more information' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    commands = SlurmCommands(prefix=("env", f"PATH={tmp_path}"))
    with pytest.raises(SlurmError, match=r"sbatch failed: unrecognized option '--partiton=debug'$"):
        commands.run("sbatch", ["--test-only"])
