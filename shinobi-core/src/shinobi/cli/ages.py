"""Ages on the command line: ``30d``, ``12h``, ``90m``, ``45s``, ``2w``; a bare number is days.

``ninja cache prune --older-than`` and ``ninja clean --runs --older-than``
read them alike, so what works for one works for the other. Both measure from
the last use, not the making: an entry's last hit (or its storing), a run
folder's last write.
"""

from __future__ import annotations

import re

__all__ = ["parse_age"]

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "": 86400}


def parse_age(text: str) -> float:
    """Seconds in ``text``; a UsageError naming the accepted forms otherwise."""
    match = _AGE.match(text)
    if not match:
        from shinobi.errors import UsageError

        raise UsageError(f"--older-than {text!r}: write an age like 30d, 12h, 90m or 2w")
    number, unit = match.groups()
    return float(number) * _SECONDS[unit]
