"""Round 25, C4 items 2 and 5: config values read one way in every layer, empty paths refused."""

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
