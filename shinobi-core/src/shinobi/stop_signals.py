"""The signals that stop ninja (SIGINT, SIGTERM, SIGHUP, SIGQUIT), handled for one block.

A run turns them into a deliberate teardown, a submission into "stop once the
job on its way is on record": each installs its own handler for the length
of the work and puts back what was there. Only the main thread can install
one; elsewhere (ninja called from a program's thread) the block runs with the
program's own handling. A signal that was ignored when the block began (``nohup``
ignores SIGHUP) is left ignored; for the ``ninja`` command, "began" is when
the command started (:func:`note_command_start`), so a recipe module that
ignores SIGINT as it loads cannot make the run deaf to Ctrl-C.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["STOP_SIGNALS", "handled", "note_command_start"]

#: SIGQUIT is Ctrl-\ (backslash), the terminal's "really quit": by default it ended ninja on
#: the spot, and the steps, in sessions of their own, ran on as orphans.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)

#: The stop signals ignored when the ``ninja`` command started; None where no
#: command noted them (a program calling ninja's functions: its dispositions,
#: when the block begins, are its own choice).
_IGNORED_AT_START: frozenset[int] | None = None


def note_command_start() -> None:
    """Note which stop signals the ``ninja`` command was started with ignored,
    before any code of the user's (the recipe module) can change them."""
    global _IGNORED_AT_START
    _IGNORED_AT_START = frozenset(
        sig for sig in STOP_SIGNALS if signal.getsignal(sig) is signal.SIG_IGN
    )


def _left_ignored(sig: int) -> bool:
    if _IGNORED_AT_START is not None:
        return sig in _IGNORED_AT_START
    return signal.getsignal(sig) is signal.SIG_IGN


@contextlib.contextmanager
def handled(handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """``handler`` for every stop signal while the block runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A signal ignored when ninja started stays ignored: `nohup ninja run` must
    # outlive the logout, and a shell script's `ninja run &` its Ctrl-C.
    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS if not _left_ignored(sig)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
