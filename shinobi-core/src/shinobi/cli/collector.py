"""When the ``ninja`` process runs Python's cyclic garbage collector.

Building a recipe's graph and plan (or its compiled jobs) creates hundreds of
thousands of shinobi's own long-lived objects, none of them garbage and almost
none in reference cycles. The collector walking them again and again as they
age took 1.45 s of a 100,000-step ``ninja compile`` (0.77 s with it off while
shinobi builds) and freed nothing. So a command keeps the collector off while
shinobi's own code builds (:func:`building`), and on wherever code of the
user's runs: the recipe module as it loads, the steps, in-process pysteps.
Such code may make cyclic garbage of any size, and only the collector frees
it.

For the whole command the collector runs less often than Python's default (a
large recipe is millions of objects that do not change). In the ``ninja``
process itself, the libraries are frozen out of the collector's way before
the recipe module loads (:func:`freeze_libraries`), and so is what exists
once shinobi has built: everything built lives until ninja exits, and the
steps, the exit and the interpreter's teardown then walk none of it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from shinobi.collector_paused import collector_paused

__all__ = [
    "at_exit",
    "building",
    "command_ended",
    "command_started",
    "freeze_libraries",
    "own_process_starting",
]

Saved = tuple[bool, tuple[int, int, int], bool]

#: Whether the running command owns its process (the ``ninja`` console script)
#: rather than being called by a program that lives on after it.
_own_process = False

#: Whether :func:`freeze_libraries` has frozen them in this process already.
_libraries_frozen = False

#: Whether nothing but imports has run in this process: the console script
#: says so before it imports the command line (:func:`own_process_starting`).
_fresh_heap = False


#: The collector's thresholds while a command runs: a young-generation pass
#: every 50,000 net allocations instead of every 700.
THRESHOLDS = (50_000, 20, 20)


def own_process_starting() -> None:
    """The command's thresholds from the first import on, for the console script.

    Called before click, shinobi's command line and pydantic load, so their
    imports are not walked over and over by collections that free nothing.
    """
    global _fresh_heap
    _fresh_heap = True
    gc.set_threshold(*THRESHOLDS)


def command_started(own_process: bool) -> Saved:
    """The command's thresholds; returns what :func:`command_ended` puts back."""
    global _own_process
    saved: Saved = (gc.isenabled(), gc.get_threshold(), _own_process)
    _own_process = own_process
    gc.set_threshold(*THRESHOLDS)
    return saved


def command_ended(saved: Saved) -> None:
    """The collector as it was before the command, for a caller that lives on."""
    global _own_process
    enabled, threshold, _own_process = saved
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def freeze_libraries(load: Callable[[], object]) -> None:
    """Call ``load`` (imports, nothing of the user's), freezing what it loads.

    click, pydantic (with the schema machinery shinobi's configuration models
    load), shinobi and the standard library are most of the objects a short
    command ever has, and all of them live until ninja exits. Frozen before
    the recipe module loads, they are not walked by the collection that ends
    :func:`building`, which then sees only the recipe and what shinobi built
    from it: a one-step ``ninja run`` spent about 12 ms of its 200 walking
    the libraries there.

    Whatever the process held before is collected first (a program may have
    called ``main()`` after work of its own), so only garbage the imports
    themselves left can be frozen unfinalised. In the console script nothing
    but imports has run, and that collection, a walk of everything imported
    so far that frees next to nothing, is skipped (5 to 7 ms of every recipe
    command here). It happens once per process, in the command that owns it:
    a recipe command run again, or run from inside a run, freezes nothing.
    """
    global _libraries_frozen
    if not _own_process or _libraries_frozen:
        load()
        return
    _libraries_frozen = True
    if not _fresh_heap:
        gc.collect()
    load()
    gc.freeze()


@contextmanager
def building(*, last: bool = False) -> Iterator[None]:
    """Collector off while shinobi's own code builds graphs, plans and scripts.

    In a process the command owns, what is garbage at the end is collected
    and what is alive is frozen: it lives until ninja exits. Freezing spares
    the collection that re-enabling would start over every object just built,
    and the later ones that would walk them again (the steps', the exit's).
    The collection comes first because code of the user's runs here too (the
    validators of a recipe's models), and frozen garbage would never be
    freed, nor its finalisers run. A program that called the command keeps
    its collector as it was, unfrozen: what it holds now may be garbage later.

    ``last`` says the command ends with this (a dry run, a compile, a graph):
    nothing built is freed before the process ends anyway, so what building
    made is frozen without that collection, which walks every object just
    built for nothing (0.65 s of a 100,000-step compile, measured side by
    side: 7.8 s became 7.3 s; little at 10,000 steps). What was garbage
    before is collected first, as the heap is then only the recipe (a
    program calling ``main()`` twice keeps its garbage finalised). The cost:
    the garbage building left is kept until exit (about 60 MB more at the
    peak of a 100,000-step compile, 10 %), and cyclic garbage the user's
    validators leave while shinobi builds keeps its finalisers unrun, as
    does any object still alive at exit.
    """
    was_on = gc.isenabled()
    if _own_process and was_on and last:
        gc.collect()
    with collector_paused():
        try:
            yield
        finally:
            if _own_process and was_on:  # before the collector is back on
                if not last:
                    gc.collect()
                gc.freeze()


def at_exit() -> None:
    """Collect what is garbage now, then freeze everything still alive.

    The interpreter's own exit collection runs right after the atexit
    handlers (this one runs last: it is registered first), so collecting here
    finalises exactly the garbage it would have, whether or not the collector
    is on. What is still alive then (every module, class and pydantic schema)
    lives until the process ends anyway; frozen, the collections that run
    while the modules are torn down skip it instead of walking it again and
    again, which took longer than the whole of a short run's own work.
    """
    try:
        gc.collect()
        gc.freeze()
    except KeyboardInterrupt:  # a Ctrl-C as ninja exits: it has said all it will
        pass
