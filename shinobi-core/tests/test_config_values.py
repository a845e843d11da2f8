"""Configuration values of the wrong kind are refused naming the key and its layer.

``true``/``false`` were taken as the numbers 1 and 0 (pydantic's lax mode):
``max_workers = true`` ran one worker, ``SHINOBI_EXECUTION_GRACE_PERIOD=false``
stopped steps with an immediate SIGKILL.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.errors import ConfigError


@pytest.fixture(autouse=True)
def _no_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))


@pytest.mark.parametrize("key", ["max_workers", "cpus", "grace_period"])
def test_a_boolean_for_a_number_in_a_file_is_refused(tmp_path: Path, key: str) -> None:
    project = tmp_path / "shinobi.toml"
    project.write_text(f"[execution]\n{key} = true\n")
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, environ={})
    assert str(caught.value) == (
        f"configuration key 'execution.{key}' (from project file {project}):"
        " true is not a number; write a number"
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SHINOBI_EXECUTION_CPUS", "true"),
        ("SHINOBI_EXECUTION_GRACE_PERIOD", "false"),
        ("SHINOBI_EXECUTION_MAX_WORKERS", "true"),
    ],
)
def test_a_boolean_for_a_number_in_a_variable_is_refused(
    tmp_path: Path, variable: str, value: str
) -> None:
    with pytest.raises(ConfigError, match=f"\\(from environment variable {variable}\\): {value}"):
        load_config(cwd=tmp_path, environ={variable: value})


def test_numbers_and_booleans_where_they_belong_still_read(tmp_path: Path) -> None:
    environ = {
        "SHINOBI_EXECUTION_CPUS": "2",
        "SHINOBI_EXECUTION_GRACE_PERIOD": "0",
        "SHINOBI_CACHE_ENABLED": "false",
    }
    config = load_config(cwd=tmp_path, environ=environ)
    assert config.execution.cpus == 2.0 and config.execution.grace_period == 0.0
    assert config.cache.enabled is False


def test_an_unknown_backend_key_holding_a_table_names_its_file(tmp_path: Path) -> None:
    """Sources are recorded per leaf (``backend.native.env.FOO``): the table's key
    ``backend.native.env`` itself has none, and was said to come "from configuration"."""
    project = tmp_path / "shinobi.toml"
    project.write_text('[backend.native]\nenv = {FOO = "1"}\n')
    config = load_config(cwd=tmp_path, environ={})
    with pytest.raises(ConfigError) as caught:
        config.check_backend_table("native", [])
    assert str(caught.value).startswith(
        f"configuration key 'backend.native.env' (from project file {project})"
        " is not a setting of the native backend"
    )


@pytest.mark.parametrize(
    ("given", "taken"),
    [
        ('"/scratch/shared cache"', "/scratch/shared cache"),  # written as JSON, as a list is
        ("/scratch/cache", "/scratch/cache"),  # as written
        ("123", "123"),  # a number is still text here
        ('"', '"'),  # no JSON string: as written
    ],
)
def test_a_text_setting_takes_a_json_string_as_its_text(
    tmp_path: Path, given: str, taken: str
) -> None:
    """Quoted as JSON, the quotes were the value's own: the cache went to a folder
    called ``"`` under the working directory, and the shared one was never used."""
    config = load_config(cwd=tmp_path, environ={"SHINOBI_CACHE_DIR": given})
    assert config.cache.dir == taken


def test_config_show_writes_letters_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from shinobi.cli.main import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_BACKEND_VENV", "vs/my venv ü/env")
    result = CliRunner().invoke(cli, ["config", "show"])
    assert result.exit_code == 0, result.output
    assert '"vs/my venv ü/env"' in result.output
