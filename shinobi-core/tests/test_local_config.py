"""Configuration errors in the configuration's own terms, naming the key and file.

pydantic's union of ``str | int`` answered ``memory = 1.5`` with
``'execution.memory.str' (from configuration): Input should be a valid
string`` and took ``memory = true`` as a one-byte budget; a key that is not
a setting was "Extra inputs are not permitted".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.errors import ConfigError


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    project = tmp_path / "shinobi.toml"
    project.write_text(text)
    return project


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("true", "not a size: True"),
        ("64", "64 bytes is too small to be meant"),
        ("[1]", "not a size"),
    ],
)
def test_a_memory_budget_that_is_not_a_size_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, said: str
) -> None:
    project = _project(tmp_path, monkeypatch, f"[execution]\nmemory = {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, environ={})
    message = str(caught.value)
    assert f"'execution.memory' (from project file {project})" in message
    assert said in message


def test_a_fractional_byte_count_is_a_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, monkeypatch, "[execution]\nmemory = 2097152.5\n")
    assert load_config(cwd=tmp_path, environ={}).execution.memory == 2097153


def test_a_misspelt_key_is_not_a_setting_in_plain_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path, monkeypatch, "[execution]\nmax_wrokers = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, environ={})
    message = str(caught.value)
    assert "not a setting; did you mean 'max_workers'?" in message
    assert "Extra inputs" not in message


def test_a_backend_venv_table_says_where_the_venv_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, monkeypatch, '[backend.venv]\nvenv = "/opt/venvs/cal"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, environ={})
    message = str(caught.value)
    assert str(project) in message
    assert "under [backend]" in message and "valid string" not in message


def test_a_section_given_a_value_says_it_is_a_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path, monkeypatch, "execution = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, environ={})
    message = str(caught.value)
    assert "write [execution] with its keys under it" in message
    assert "ExecutionConfig" not in message
