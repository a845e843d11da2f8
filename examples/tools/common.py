"""What every example tool shares: its log of what ran, and the measurement set's state.

The "measurement set" is a directory holding ``state.json`` (the residual
gain error calibration works down) - enough state for the tools to make real
decisions from, in a few bytes.
"""

from __future__ import annotations

import json
import os
import time

__all__ = ["load_state", "log", "save_state"]


def log(path: str | None, line: str) -> None:
    """Append one line, stamped, to the log of what ran (when one is given)."""
    if path:
        with open(path, "a") as fh:
            fh.write(f"{time.time():.6f} {line}\n")


def load_state(ms: str) -> dict[str, float]:
    path = os.path.join(ms, "state.json")
    if not os.path.isdir(ms):
        raise SystemExit(f"no such measurement set: {ms}")
    if not os.path.exists(path):
        return {"gain_error": 0.0}
    with open(path) as fh:
        state: dict[str, float] = json.load(fh)
    return state


def save_state(ms: str, state: dict[str, float]) -> None:
    partial = os.path.join(ms, "state.json.partial")
    with open(partial, "w") as fh:
        json.dump(state, fh)
    os.replace(partial, os.path.join(ms, "state.json"))
