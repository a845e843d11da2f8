"""The ``ninja`` console script, and ``python -m shinobi.cli``.

It exists to change one thing before anything else loads: the garbage
collector's thresholds. Importing click, shinobi and pydantic allocates a few
hundred thousand objects, none of them garbage, and at Python's default
thresholds the collector walks the growing heap again and again while they
load: 3 to 6 ms of a ``ninja`` start-up here, paid by every command. The
thresholds a command runs with (see :mod:`shinobi.cli.collector`) are set
first, pydantic is told not to scan for its plugins
(:mod:`shinobi.cli.pydantic_plugins`), and only then is the command line
imported. A program that calls
:func:`shinobi.cli.main.main` itself keeps its collector as it was.

``ninja``, ``ninja --help`` and ``ninja -h`` are answered before either, and
without click, where :mod:`shinobi.cli.top_help` can say exactly what click would.
"""

from __future__ import annotations

#: typing.TYPE_CHECKING, without importing typing: see shinobi/__init__.py.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["main"]


def main() -> Any:
    """``ninja``: the collector set for a short-lived command, then the command line.

    A Ctrl-C while the command line is still being imported (the first tens
    of milliseconds) ends ninja as one later would, with status 130 and one
    line, not with a traceback through the import machinery.
    """
    try:
        plain_help = _plain_help()
        if plain_help is None:
            from shinobi import stop_signals
            from shinobi.cli import collector, pydantic_plugins

            stop_signals.note_command_start()  # before a recipe module can change them
            collector.own_process_starting()
            pydantic_plugins.skip_discovery()
            from shinobi.cli.main import main as run
    except KeyboardInterrupt:
        import sys

        if sys.stderr is not None:
            sys.stderr.write("ninja: interrupted while starting; nothing was run\n")
        raise SystemExit(130) from None
    if plain_help is not None:
        return plain_help()
    try:
        return run()
    finally:
        _outlived_by_threads()


def _outlived_by_threads() -> None:
    """Say so when threads a recipe started outlive the command, then wait for them.

    Python waits for every thread that is not a daemon before it exits. A
    recipe module that started one (a watcher, a client's flusher) kept ninja
    there after its result, silently; a Ctrl-C then printed a traceback of
    Python's shutdown and exited 0. ninja says what it waits for, and a Ctrl-C
    ends the wait (and ninja) with 130.
    """
    import sys
    import threading

    main_thread = threading.main_thread()
    waiting = [t for t in threading.enumerate() if t is not main_thread and not t.daemon]
    if not waiting:
        return
    # An executor's idle workers (a ThreadPoolExecutor, asyncio's default one) end in
    # Python's own exit hook, run before it waits for threads: run it first, as
    # Python would, or the wait below never ends.
    executors = sys.modules.get("concurrent.futures.thread")
    shut_down = getattr(executors, "_python_exit", None)
    if callable(shut_down):
        shut_down()
    waiting = [t for t in waiting if t.is_alive()]
    if not waiting:
        return
    import os

    names = ", ".join(t.name for t in waiting)
    try:
        sys.stdout.flush()
        sys.stderr.write(
            f"ninja: waiting for thread(s) the recipe started to end ({names});"
            " Ctrl-C stops waiting\n"
        )
        sys.stderr.flush()
        for thread in waiting:
            thread.join()
    except KeyboardInterrupt:
        sys.stderr.write("ninja: interrupted while waiting for the recipe's threads\n")
        sys.stderr.flush()
        os._exit(130)  # a plain exit would wait for them again
    except (OSError, ValueError):  # stdout or stderr gone: the wait is Python's own
        pass


def _plain_help() -> Callable[[], int] | None:
    """What shows ninja's own help without loading click, if that is what was asked."""
    import sys

    from shinobi.cli.top_help import fast_path

    return fast_path(sys.argv)
