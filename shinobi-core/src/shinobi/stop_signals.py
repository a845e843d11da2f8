"""The signals that stop ninja (SIGINT, SIGTERM, SIGHUP), handled for one block.

A run turns them into a deliberate teardown, a submission into "stop once the
job on its way is on record": each installs its own handler for the length
of the work and puts back what was there. Only the main thread can install
one; elsewhere (ninja called from a program's thread) the block runs with the
program's own handling. A signal that was ignored when the block began (``nohup``
ignores SIGHUP) is left ignored.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["STOP_SIGNALS", "handled"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def handled(handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """``handler`` for every stop signal while the block runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A signal ignored when ninja started stays ignored: `nohup ninja run` must
    # outlive the logout, and a shell script's `ninja run &` its Ctrl-C.
    previous = {
        sig: signal.signal(sig, handler)
        for sig in STOP_SIGNALS
        if signal.getsignal(sig) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
