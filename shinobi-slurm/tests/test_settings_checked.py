"""A [backend.slurm] value the backend cannot use is refused before any job, naming the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import EXAMPLES, Ninja

from shinobi.errors import ConfigError
from shinobi_slurm.backend import SlurmBackend


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"poll_max": "soon"}, "poll_max must be a number of seconds"),
        ({"outage_limit": "never"}, "outage_limit must be a number of seconds"),
        ({"command_timeout": -1}, "command_timeout must not be negative"),
        # an internal error (OverflowError) when a command ran; nan: never give up
        ({"command_timeout": "inf"}, "command_timeout must be a finite number of seconds"),
        ({"outage_limit": float("nan")}, "outage_limit must be a finite number of seconds"),
        # every call timed out at once, blaming a controller that was up
        ({"command_timeout": 0}, "command_timeout must be more than 0 s"),
        ({"poll_min": 5, "poll_max": 1}, r"poll_min \(5 s\) is more than poll_max \(1 s\)"),
    ],
)
def test_a_bad_setting_is_refused_by_prepare(settings: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        SlurmBackend(settings).prepare([])


@pytest.mark.parametrize("key", ["poll_min", "poll_max"])
def test_polling_without_a_pause_is_refused(key: str) -> None:
    """At 0 the poller called sacct back to back, ten times a second, all run long."""
    with pytest.raises(ConfigError, match=rf"{key} must be at least 0\.5 s, not 0: each round"):
        SlurmBackend({key: 0}).prepare([])


def test_watching_a_launch_without_a_pause_is_refused() -> None:
    from shinobi_slurm.compile import SlurmTarget

    with pytest.raises(ConfigError, match=r"status_interval must be at least 0\.5 s, not 0"):
        SlurmTarget({"status_interval": 0}).poll_interval()
    assert SlurmTarget({"status_interval": 2}).poll_interval() == 2.0


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("status_interval = 0", r"status_interval must be at least 0\.5 s"),
        ('poll_min = "fast"', "poll_min must be a number of seconds"),
        ("outage_limit = -1", "outage_limit must not be negative"),
    ],
)
def test_compile_submit_refuses_what_status_would_before_submitting(
    ninja: Ninja, tmp_path: Path, setting: str, said: str
) -> None:
    """compile --submit took these, and ninja status of the launch then refused
    them: a launch nothing could follow. Refused first, nothing submitted."""
    (tmp_path / "shinobi.toml").write_text(f"[backend.slurm]\n{setting}\n")
    done = ninja("compile", f"{EXAMPLES}/offload_demo.py:pipe", "--target", "m.ms", "--submit")
    assert done.returncode == 2, done.stderr
    assert re.search(said, done.stderr), done.stderr
    assert not list(tmp_path.glob(".shinobi/pipe/**/handle.json"))
