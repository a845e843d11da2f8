"""Whether a process the tests started is still running, for tests of teardown."""

from __future__ import annotations

__all__ = ["alive"]


def alive(pid: int) -> bool:
    """Running, not a zombie (a reparented process may never be reaped here)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")
