"""load_config() with no layer setting anything makes the defaults without validating
them: the result must be what validating nothing makes, in every respect a caller sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.config import AppConfig, load_config


def _no_layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppConfig:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "absent.toml"))
    return load_config({"execution.max_workers": None}, cwd=tmp_path, environ={})


def _validated_nothing() -> AppConfig:
    config = AppConfig.model_validate({})
    config.sources = {}
    return config


def test_defaults_are_what_validating_nothing_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made, validated = _no_layers(tmp_path, monkeypatch), _validated_nothing()
    assert made == validated
    assert made.model_fields_set == validated.model_fields_set
    assert made.model_dump() == validated.model_dump()
    assert made.effective() == validated.effective()
    assert made.backend_settings("slurm") == validated.backend_settings("slurm")
    for section in ("execution", "backend", "provenance", "cache"):
        mine, theirs = getattr(made, section), getattr(validated, section)
        assert type(mine) is type(theirs)
        assert mine.__dict__ == theirs.__dict__
        assert mine.model_fields_set == theirs.model_fields_set
        assert mine.model_extra == theirs.model_extra


def test_defaults_share_no_mutable_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two loads give two configurations: changing one's list changes not the other's."""
    first, second = _no_layers(tmp_path, monkeypatch), _no_layers(tmp_path, monkeypatch)
    first.backend.venv_host_commands.append("git")
    first.provenance.env_allow.append("EXTRA")
    assert second.backend.venv_host_commands == []
    assert "EXTRA" not in second.provenance.env_allow


def test_defaults_still_check_what_is_assigned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A default configuration is still validated on assignment, as a validated one is."""
    from pydantic import ValidationError

    config = _no_layers(tmp_path, monkeypatch)
    with pytest.raises(ValidationError):
        config.execution.max_workers = 0
    with pytest.raises(ValidationError):
        config.execution.max_workers = True  # type: ignore[assignment]
    config.execution.max_workers = 3
    assert config.execution.max_workers == 3


def test_a_layer_is_validated_after_defaults_were_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Models whose validators were never built still refuse a bad key later."""
    from shinobi.errors import ConfigError

    _no_layers(tmp_path, monkeypatch)
    (tmp_path / "shinobi.toml").write_text("[execution]\nmax_workers = true\n")
    with pytest.raises(ConfigError, match="true is not a number"):
        load_config(cwd=tmp_path, environ={})
    (tmp_path / "shinobi.toml").write_text("[cache]\nenabled = false\n")
    config = load_config(cwd=tmp_path, environ={})
    assert config.cache.enabled is False
    assert config.execution == AppConfig.model_validate({}).execution
    assert config.sources == {"cache.enabled": f"project file {tmp_path / 'shinobi.toml'}"}
