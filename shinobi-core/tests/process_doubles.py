"""A process table with a process that will not die: a real one cannot be made here."""

from __future__ import annotations

from shinobi import teardown


class UndyingTable(teardown.ProcessTable):
    """The real table, plus one live process that ignores every signal."""

    def __init__(self, ghost: int) -> None:
        self.ghost = ghost

    def members(self, sid: int | None, tag: str | None, *, prefix: bool = False) -> list[int]:
        return [*super().members(sid, tag, prefix=prefix), self.ghost]

    def send(self, pid: int, sig: int) -> None:
        if pid != self.ghost:
            super().send(pid, sig)
