"""Config values read one way in every layer, empty paths refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.errors import ConfigError


@pytest.mark.parametrize(
    ("variable", "key"),
    [
        ("SHINOBI_EXECUTION_WORKDIR", "execution.workdir"),
        ("SHINOBI_BACKEND_VENV", "backend.venv"),
    ],
)
def test_an_empty_path_variable_is_refused_like_an_empty_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, key: str
) -> None:
    """``SHINOBI_EXECUTION_WORKDIR=$UNSET`` in a job script put run records in whatever
    directory the job ran in, without a word; an empty cache.dir was refused."""
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    with pytest.raises(
        ConfigError, match=rf"'{key}' \(from environment variable {variable}\): is empty"
    ):
        load_config(cwd=tmp_path, environ={variable: ""})


def test_an_empty_workdir_in_a_file_is_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").write_text('[execution]\nworkdir = " "\n')
    with pytest.raises(ConfigError, match=r"from project file .*shinobi\.toml\): is empty"):
        load_config(cwd=tmp_path, environ={})
    (tmp_path / "shinobi.toml").write_text(f'[execution]\nworkdir = "{tmp_path}"\n')
    assert load_config(cwd=tmp_path, environ={}).execution.workdir_path() == tmp_path.resolve()


@pytest.mark.parametrize(
    ("value", "meant"),
    [(0, False), (1, True), ("yes", True), ("no", False), ("On", True), ("false", False)],
)
def test_config_bool_reads_a_switch_as_the_global_keys_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: object, meant: bool
) -> None:
    """A plugin's table read 0 and "yes" as errors where cache.enabled took them."""
    from shinobi.config import config_bool

    assert config_bool(value) is meant
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    config = load_config(cwd=tmp_path, environ={"SHINOBI_CACHE_ENABLED": str(value)})
    assert config.cache.enabled is meant


@pytest.mark.parametrize("value", ["maybe", 2, None, [], "  "])
def test_config_bool_refuses_what_is_no_switch(value: object) -> None:
    from shinobi.config import config_bool

    with pytest.raises(ValueError, match=r"must be true or false \(or yes/no"):
        config_bool(value)


def test_a_dotted_plugin_key_is_told_where_it_was_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Container backends say ``backend.docker.init must ...``: that named no layer."""
    from shinobi.config import said_where

    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    load_config(cwd=tmp_path, environ={"SHINOBI_BACKEND_DOCKER_INIT": "perhaps"})
    said = said_where("backend.docker.init must be true or false, not 'perhaps'")
    assert said.endswith("(init is set in environment variable SHINOBI_BACKEND_DOCKER_INIT)")


def test_the_default_check_settings_checks_nothing() -> None:
    from shinobi.backends.native import NativeBackend

    NativeBackend.check_settings({"anything": object()})
