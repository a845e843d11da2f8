"""The ``--interval SECONDS`` of commands that ask a scheduler again and again."""

from __future__ import annotations

import math
from typing import Any

import click

__all__ = ["INTERVAL"]


class _Interval(click.FloatRange):
    """Seconds, at least 0.5: every round is a call to a controller every user of a
    cluster shares. ``nan`` and ``inf`` are no number of seconds (click's range
    lets NaN through, which ended in ``time.sleep``'s ValueError)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is no number of seconds; give one, 0.5 or more", param, ctx)
        return seconds


#: A day: more than a sleep can take on some platforms' time_t is not an interval.
INTERVAL = _Interval(min=0.5, max=86400)
