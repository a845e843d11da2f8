"""A memory under the least one, written with its unit.

``Resources(memory="1M")`` was refused with "a bare number is bytes: write the
unit" though the unit was written; it is told the least a memory may be.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.config import ConfigError, load_config
from shinobi.resources import Resources


@pytest.mark.parametrize("memory", ["1M", "1m", "0.5KiB", "1KB", "16B"])
def test_a_small_memory_with_its_unit_is_told_the_least(memory: str) -> None:
    with pytest.raises(ValueError) as caught:
        Resources(memory=memory)
    message = str(caught.value)
    assert f"Resources(memory={memory!r})" in message
    assert "at least 1MiB" in message, message
    assert "bare number" not in message and "write the unit" not in message, message


@pytest.mark.parametrize("memory", [16, "16", 1.5])
def test_a_bare_number_is_told_to_write_its_unit_and_the_least(memory: object) -> None:
    with pytest.raises(ValueError) as caught:
        Resources(memory=memory)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "a bare number is bytes" in message and "write the unit" in message, message
    assert "1MiB" in message, message


def test_a_run_budget_with_its_unit_is_told_the_least(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shinobi.toml").write_text('[execution]\nmemory = "1M"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, environ={})
    message = str(caught.value)
    assert "at least 1MiB" in message and "bare number" not in message, message
