"""Ages on the command line: ``30d``, ``12h``, ``90min``, ``45s``, ``2w``; a bare
number is days.

``ninja cache prune --older-than`` and ``ninja clean --runs --older-than``
read them alike, so what works for one works for the other. Both measure from
the last use, not the making: an entry's last hit (or its storing), a run
folder's last write.

A bare ``m`` is refused: ``6m`` reads as six months as readily as six minutes,
and taken for minutes it deletes every record older than that.
"""

from __future__ import annotations

import re

__all__ = ["parse_age"]

_AGE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(s|min|h|d|w|m|)\s*$", re.ASCII | re.IGNORECASE)
_SECONDS = {"s": 1, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "": 86400}


def parse_age(text: str) -> float:
    """Seconds in ``text``; a UsageError naming the accepted forms otherwise."""
    from shinobi.errors import UsageError

    match = _AGE.match(text)
    if not match:
        raise UsageError(f"--older-than {text!r}: write an age like 30d, 12h, 90min or 2w")
    number, unit = match.groups()
    if unit.lower() == "m":
        raise UsageError(
            f"--older-than {text!r}: 'm' could mean minutes or months; write"
            f" {number}min for minutes, or months as days ({float(number) * 30:g}d)"
        )
    return float(number) * _SECONDS[unit.lower()]
