"""This machine's name, as records of runs, markers and cache entries keep it.

``os.uname`` gives the same name as ``socket.gethostname`` (both are the
kernel's node name) without importing ``socket``, which cost every ``ninja
run`` 2 ms of start-up for this one call.
"""

from __future__ import annotations

import os

__all__ = ["this_host"]


def this_host() -> str:
    """The name other records compare against to tell "this machine" from another."""
    return os.uname().nodename
