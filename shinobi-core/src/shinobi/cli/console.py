"""The ``ninja`` console script, and ``python -m shinobi.cli``.

It exists to change one thing before anything else loads: the garbage
collector's thresholds. Importing click, shinobi and pydantic allocates a few
hundred thousand objects, none of them garbage, and at Python's default
thresholds the collector walks the growing heap again and again while they
load: 3 to 6 ms of a ``ninja`` start-up here, paid by every command. The
thresholds a command runs with (see :mod:`shinobi.cli.collector`) are set
first, and only then is the command line imported. A program that calls
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
            from shinobi.cli import collector

            stop_signals.note_command_start()  # before a recipe module can change them
            collector.own_process_starting()
            from shinobi.cli.main import main as run
    except KeyboardInterrupt:
        import sys

        if sys.stderr is not None:
            sys.stderr.write("ninja: interrupted while starting; nothing was run\n")
        raise SystemExit(130) from None
    return run() if plain_help is None else plain_help()


def _plain_help() -> Callable[[], int] | None:
    """What shows ninja's own help without loading click, if that is what was asked."""
    import sys

    from shinobi.cli.top_help import fast_path

    return fast_path(sys.argv)
