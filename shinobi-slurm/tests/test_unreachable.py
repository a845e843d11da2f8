"""A step ``run --backend slurm`` could not submit because the controller is away
says what to check (no cluster needed: every Slurm command is a stand-in)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe
from shinobi_slurm.commands import SlurmCommands, SlurmError

AWAY = (
    "#!/bin/sh\n"
    'echo "$2: error: Batch job submission failed: Unable to contact slurm controller'
    ' (connect failure)" >&2\nexit 1\n'
)


def test_a_step_the_controller_never_heard_of_names_the_fix(tmp_path: Path) -> None:
    wrapper = tmp_path / "away"
    wrapper.write_text(AWAY)
    wrapper.chmod(0o755)
    config = load_config(
        {
            "backend.slurm.command_prefix": [str(wrapper)],
            "backend.slurm.submit_retry": 0,
            "cache.enabled": False,
        }
    )
    recipe = Recipe("one")
    recipe.add_step("only", Cab("only", "/bin/true"))
    result = run_recipe(recipe, backend="slurm", config=config, cwd=tmp_path)
    assert not result.ok
    error = result.steps[0].error or ""
    assert "Unable to contact slurm controller" in error
    assert error.endswith("check that slurmctld runs (`sinfo` answers), then run again")


def _sbatch(tmp_path: Path, body: str) -> SlurmCommands:
    """Commands whose sbatch is ``body``, counting its calls in ``calls``."""
    wrapper = tmp_path / "sbatch"
    wrapper.write_text(f"#!/bin/sh\necho called >> {tmp_path}/calls\n{body}\n")
    wrapper.chmod(0o755)
    return SlurmCommands(prefix=(str(wrapper),), timeout=30.0, submit_retry=3.0)


def test_a_submission_that_may_have_reached_the_controller_is_not_sent_again(
    tmp_path: Path,
) -> None:
    """A timeout after sending may have created the job: sending it again could run
    the step twice. Only "never reached the controller" is retried."""
    commands = _sbatch(
        tmp_path,
        'echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv'
        ' operation" >&2; exit 1',
    )
    with pytest.raises(SlurmError, match="Socket timed out") as raised:
        commands.submit(["job.sbatch"])
    assert raised.value.transient and not raised.value.never_sent
    assert (tmp_path / "calls").read_text() == "called\n"


def test_a_job_id_after_a_login_banner_is_the_job_id(tmp_path: Path) -> None:
    """A login node's banner printed before sbatch's answer (a command_prefix through
    its shell) is not the answer: the id is sbatch's last line."""
    commands = _sbatch(tmp_path, 'echo "Welcome to the login node"; echo "4242;cluster"')
    assert commands.submit(["job.sbatch"]) == "4242"
