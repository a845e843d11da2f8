"""A variable or table that leaves out its section is refused with the right name.

``SHINOBI_DOCKER_NETWORK=none`` (for ``SHINOBI_BACKEND_DOCKER_NETWORK``) was
ignored, so the step kept the network the user meant to take away; a
``[slurm]`` table was refused without pointing at ``[backend.slurm]``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.errors import ConfigError


@pytest.mark.parametrize(
    ("variable", "meant"),
    [
        ("SHINOBI_DOCKER_NETWORK", "SHINOBI_BACKEND_DOCKER_NETWORK"),
        ("SHINOBI_SLURM_SBATCH_OPTS", "SHINOBI_BACKEND_SLURM_SBATCH_OPTS"),
        ("SHINOBI_MAX_WORKERS", "SHINOBI_EXECUTION_MAX_WORKERS"),
        ("SHINOBI_WORKDIR", "SHINOBI_EXECUTION_WORKDIR"),
    ],
)
def test_a_variable_without_its_section_is_refused(
    tmp_path: Path, variable: str, meant: str
) -> None:
    with pytest.raises(ConfigError, match=f"did you mean {meant}\\?"):
        load_config(cwd=tmp_path, environ={variable: "none"})


@pytest.mark.parametrize(
    "variable", ["SHINOBI_DEBUG", "SHINOBI_DIR", "SHINOBI_TEARDOWN_TAG", "SHINOBI_SITE_THING"]
)
def test_other_variables_are_left_alone(tmp_path: Path, variable: str) -> None:
    load_config(cwd=tmp_path, environ={variable: "1"})


def test_a_backend_table_at_the_top_points_at_its_place(tmp_path: Path) -> None:
    (tmp_path / "shinobi.toml").write_text('[slurm]\nsbatch_opts = ["--time=1"]\n')
    with pytest.raises(ConfigError, match=r"\[backend\.slurm\]"):
        load_config(cwd=tmp_path, environ={})
