"""Python's cyclic garbage collector held off while shinobi builds a large structure.

Building the graph of a recipe of N steps makes a few objects per step that
all live on and that hold no garbage. The collector makes a full pass each
time the heap has grown by about a quarter since the last one, so while a big
graph is built it walks everything built so far again and again. That is a
geometric series, but the libraries already loaded add to every pass, and the
growth from 10,000 to 100,000 steps came out at 15-18 x instead of 10: a
100,000-step ``build_graph`` took 1.2 s with the collector running and
0.56 s without it. Counting the passes that then catch up on what was built,
the total fell from 1.5 s to 0.94 s.

A program calling :func:`shinobi.graph.build_graph` (directly or through
``run_recipe``) therefore gets the collector paused for the build and put
back as it was, never frozen: the program may drop the graph, and then the
collector has to free it. ``ninja`` itself goes further (see
:mod:`shinobi.cli.collector`).

The collector is a switch for the whole process. A thread that turns it off
while a build runs elsewhere has it turned back on when that build ends; a
program that needs it off throughout keeps it off around its own calls.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block, and on again afterwards if it was on before.

    Garbage made inside the block (a validator of the user's may make some)
    is not lost. It is freed by the next passes after the block.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
