"""When the ``ninja`` process runs Python's cyclic garbage collector.

Loading a recipe and building its graph and plan (or its compiled jobs)
creates hundreds of thousands of long-lived objects, none of them garbage
and almost none in reference cycles. The collector walking them again and
again as they age cost 5% of a 10,000-step ``ninja compile`` and 16% of a
100,000-step one, and freed nothing: the peak memory is the same without it.

So the command line starts with the collector off, and turns it back on,
with everything built so far frozen out of its way, before anything that may
go on for long and run code that is not ours: a recipe's steps (pysteps run
in this process), ``status --watch`` and ``logs --follow``.
"""

from __future__ import annotations

import gc

__all__ = ["at_exit", "pause", "restore", "resume"]


def pause() -> bool:
    """Collector off: what follows builds, it does not churn. Returns whether it was on."""
    was_on = gc.isenabled()
    gc.disable()
    return was_on


def restore(was_on: bool) -> None:
    """Back to the state :func:`pause` found, for a caller that lives on (tests, notebooks)."""
    if was_on:
        gc.enable()


def resume() -> None:
    """Collector on for long work, past everything alive now.

    The thresholds are higher than Python's defaults: a large run keeps
    millions of small results and records alive, and collecting every 700
    allocations would walk them far more often than they change.
    """
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    gc.enable()


def at_exit() -> None:
    """Collect what is garbage now, then freeze everything still alive.

    The interpreter's own exit collection runs right after the atexit
    handlers (this one runs last: it is registered first), so collecting here
    finalises exactly the garbage it would have, whether or not the collector
    was on. What is still alive then (every module, class and pydantic
    schema) lives until the process ends anyway; frozen, the collections that
    run while the modules are torn down skip it instead of walking it again
    and again, which took longer than the whole of a short run's own work.
    """
    gc.collect()
    gc.freeze()
