"""Reading ``[backend.slurm]`` values: a wrong one is a one-line configuration error.

Settings come from TOML files and ``SHINOBI_*`` variables that people edit by
hand; a value of the wrong type or a string with an unbalanced quote must be
refused naming the key, never surface as an internal error of whatever code
first used it.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from typing import Any

from shinobi.errors import ConfigError

__all__ = ["POLL_FLOOR", "SETTINGS_KEYS", "seconds_setting", "shell_words"]

#: The keys of ``[backend.slurm]``, read by the step backend and by ``ninja compile``.
SETTINGS_KEYS = frozenset(
    {
        "sbatch_opts",
        "command_prefix",
        "command_timeout",
        "submit_retry",
        "poll_min",
        "poll_max",
        "outage_limit",
        "status_interval",
    }
)


#: The shortest pause between two rounds of asking Slurm (``poll_min``, ``poll_max``,
#: ``status_interval``): at 0 a round started as the last one ended, a sacct call
#: to the site's slurmdbd every tenth of a second for as long as the run lasted.
POLL_FLOOR = 0.5


#: The longest a number of seconds may be set to: a week. Past what a platform's
#: clock holds, a wait raised OverflowError in the thread that asks Slurm.
MAX_SECONDS = 7 * 86400.0


def seconds_setting(
    values: Mapping[str, Any], key: str, default: float, minimum: float = 0.0
) -> float:
    """``values[key]`` as a number of seconds (at least ``minimum``), or ``default`` when unset."""
    value = values.get(key, default)
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise TypeError(value)
        seconds = float(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"[backend.slurm] {key} must be a number of seconds, not {value!r}"
        ) from None
    if not math.isfinite(seconds):  # nan compares false with everything: no limit at all
        raise ConfigError(
            f"[backend.slurm] {key} must be a finite number of seconds, not {value!r}"
        )
    if seconds < 0:
        raise ConfigError(f"[backend.slurm] {key} must not be negative, not {value!r}")
    if seconds > MAX_SECONDS:  # a wait of 1e12 s overflowed the clock: the run hung
        raise ConfigError(
            f"[backend.slurm] {key} must be at most {MAX_SECONDS:g} s (a week), not {value!r}"
        )
    if seconds < minimum:
        raise ConfigError(
            f"[backend.slurm] {key} must be at least {minimum:g} s, not {value!r}: each round"
            " is a call to Slurm's controller or database, shared by every user of the cluster"
        )
    return seconds


def shell_words(key: str, text: str) -> list[str]:
    """``text`` split as a shell would; an unbalanced quote names the key."""
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise ConfigError(
            f"[backend.slurm] {key}: cannot split {text!r} into words ({exc}); balance its quotes"
        ) from None
