"""A step ``run --backend slurm`` could not submit because the controller is away
says what to check (no cluster needed: every Slurm command is a stand-in)."""

from __future__ import annotations

from pathlib import Path

from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe

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
