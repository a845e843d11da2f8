"""Every layer overrides the ones before it key by key, whatever shape it comes in.

An empty table in the project file (``[execution]`` with its keys commented
out) was a value of its own: it replaced the section that the user file, the
environment and the command line had filled, so ``-j 2`` and
``SHINOBI_EXECUTION_MAX_WORKERS`` were lost while ``config show`` still named
them as the source of the default it printed. A backend table given as JSON
in a variable replaced the whole table the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.errors import ConfigError

USER = """\
[execution]
max_workers = 3
grace_period = 5
[backend.docker]
network = "host"
init = false
[provenance]
enabled = true
"""


@pytest.fixture
def layered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user file with settings in three sections; the project directory, returned."""
    (tmp_path / "user.toml").write_text(USER)
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "user.toml"))
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.mark.parametrize("table", ["[execution]", "[provenance]", "[backend]", "[backend.docker]"])
def test_an_empty_table_in_the_project_file_sets_nothing(layered: Path, table: str) -> None:
    (layered / "shinobi.toml").write_text(f"{table}\n# max_workers = 8\n")
    config = load_config(cwd=layered, environ={})
    assert config.execution.max_workers == 3 and config.execution.grace_period == 5
    assert config.provenance.enabled is True
    assert config.backend_settings("docker")["network"] == "host"
    assert config.sources["execution.max_workers"].startswith("user file ")


def test_the_environment_and_the_command_line_still_win_over_an_empty_table(
    layered: Path,
) -> None:
    (layered / "shinobi.toml").write_text("[execution]\n")
    environ = {"SHINOBI_EXECUTION_GRACE_PERIOD": "7"}
    config = load_config({"execution.max_workers": 2}, cwd=layered, environ=environ)
    assert config.execution.max_workers == 2 and config.execution.grace_period == 7
    assert config.sources["execution.max_workers"] == "command line"


def test_a_table_given_as_json_in_a_variable_sets_its_keys_one_by_one(layered: Path) -> None:
    environ = {"SHINOBI_BACKEND_DOCKER": '{"network": "bridge"}'}
    config = load_config(cwd=layered, environ=environ)
    settings = config.backend_settings("docker")
    assert settings["network"] == "bridge" and settings["init"] is False
    said = "environment variable SHINOBI_BACKEND_DOCKER"
    assert config.sources["backend.docker.network"] == said
    assert config.sources["backend.docker.init"].startswith("user file ")


def test_a_bad_backend_key_is_blamed_on_the_file_that_holds_it(layered: Path) -> None:
    (layered / "shinobi.toml").write_text('[backend]\ndocker = "x"\n')
    with pytest.raises(
        ConfigError, match=r"'backend\.docker' is not a setting \(from project file"
    ):
        load_config(cwd=layered, environ={})
