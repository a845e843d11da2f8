"""A [backend.slurm] value the backend cannot use is refused before any job, naming the key."""

from __future__ import annotations

import pytest

from shinobi.errors import ConfigError
from shinobi_slurm.backend import SlurmBackend


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"poll_max": "soon"}, "poll_max must be a number of seconds"),
        ({"outage_limit": "never"}, "outage_limit must be a number of seconds"),
        ({"command_timeout": -1}, "command_timeout must not be negative"),
    ],
)
def test_a_bad_setting_is_refused_by_prepare(settings: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        SlurmBackend(settings).prepare([])
