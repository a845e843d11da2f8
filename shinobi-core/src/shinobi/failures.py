"""Wording a failed step's account: which signal, and what it usually means."""

from __future__ import annotations

import os
import re
import signal
import traceback

from shinobi.backends.base import BackendRun

__all__ = [
    "QUOTED_LINE",
    "STEP_CODE_FAILURES",
    "cut_line",
    "describe_failure",
    "is_engine_banner",
    "more_in_stderr",
    "raised_line",
    "signal_name",
    "traced",
    "user_traceback",
]

#: What a step's own Python (an orchestration function, an in-process pystep)
#: may raise that fails that step and not ninja: anything at all. That is any
#: exception, ``sys.exit()``, a ``KeyboardInterrupt`` it raises itself (a real
#: Ctrl-C reaches only the main thread, which runs no step), and the other
#: ``BaseException`` kinds libraries use to unwind (``GeneratorExit``, a test
#: framework's ``Failed``, an async library's ``Cancelled``). Ninja itself
#: raises none of them through a step's code.
STEP_CODE_FAILURES = (BaseException,)


def more_in_stderr(text: str) -> str:
    """What a one-line error adds when the whole text (in the step's stderr) ran
    to more lines."""
    return " (more in the step's stderr)" if "\n" in text.strip() else ""


def raised_line(exc: BaseException, traced: bool = False) -> str:
    """What a step's own Python raised, on the one line a failed step's error is:
    ``Type: first line``, just ``Type`` for an empty message (a bare ``raise
    KeyboardInterrupt``), and a pointer to the step's stderr, which holds the
    whole text (``traced``: and the traceback) when there is more to read."""
    text = str(exc).strip()
    said = f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__
    if traced:
        return f"{said} (traceback in the step's stderr)"
    return f"{said}{more_in_stderr(text)}"


_OURS = os.path.dirname(os.path.abspath(__file__)) + os.sep


def traced(exc: BaseException) -> bool:
    """Whether the traceback of what a step's own code raised helps: not for a
    ``sys.exit()``, nor for ninja's own refusal of something the code asked
    (``ctx.run(backend="slurm")`` with no shinobi-slurm), whose one line names
    the fix and whose frames are ninja's."""
    from shinobi.errors import ShinobiError

    return not isinstance(exc, SystemExit | ShinobiError)


def user_traceback(exc: BaseException) -> str:
    """The traceback of what a step's own code raised, from its first frame on.

    The frames of ninja that called it come first and say nothing about the
    user's bug, so they are left out; the frames below the user's (a
    ``ctx.run()`` that failed inside ninja) stay.
    """
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_OURS):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


#: Lines a container engine prints on every run whatever the tool does (docker on
#: a host without IPv4 forwarding): never a failed tool's last word in a compiled
#: job that wraps one (a container backend takes them out of the tool's stderr
#: itself: ``BackendRun.engine_stderr``).
_ENGINE_BANNERS = re.compile(
    r"^WARNING: IPv4 forwarding is disabled\. Networking will not work\.$"
    # the hint docker and podman add under their own error: never what went wrong
    r"|^(?:Run|See) '(?:docker|podman) [a-z]+ --help'(?: for more information)?\.?$"
)


def is_engine_banner(line: str) -> bool:
    """Whether ``line`` (stripped) is one of :data:`_ENGINE_BANNERS`."""
    return _ENGINE_BANNERS.match(line) is not None


#: Characters of a tool's line that ninja quotes in a line of its own (a FAILED
#: line, the final error, the stderr lines shown after a failure) at most: one
#: line of 262,144 characters filled 3,300 rows and pushed the error off screen.
QUOTED_LINE = 300


def _last_line(text: str) -> str:
    """The tool's last line that says something, cut to :data:`QUOTED_LINE` and
    marked so when it is (cut silently, a path or a message read as whole)."""
    for line in reversed(text.splitlines()):
        if line.strip():
            return cut_line(line.strip())
    return ""


def cut_line(line: str) -> str:
    """``line`` as ninja quotes a tool's line: whole, or cut to :data:`QUOTED_LINE`
    characters and marked where it was cut."""
    if len(line) <= QUOTED_LINE:
        return line
    return f"{line[:QUOTED_LINE]} [... cut at {QUOTED_LINE} characters]"


def describe_failure(run: BackendRun) -> str | None:
    """A one-line account of why ``run`` failed, or None when it did not."""
    if run.cancelled:
        return "interrupted"
    if run.oom:
        return run.reason or "killed: out of memory (it exceeded its declared memory limit)"
    if run.reason and run.returncode != 0:
        return run.reason
    if run.signal is not None:
        name = signal_name(run.signal)
        if run.signal == signal.SIGKILL:
            return (
                f"killed by {name} (signal {run.signal}): usually the out-of-memory killer;"
                " check `dmesg` and the memory the step declares"
            )
        return f"killed by {name} (signal {run.signal})"
    if run.returncode != 0:
        tail = _last_line(run.stderr) or _last_line(run.stdout)
        detail = f": {tail}" if tail else ""
        return f"exited with code {run.returncode}{_killed_under_a_shell(run.returncode)}{detail}"
    return None


def _killed_under_a_shell(code: int) -> str:
    """What an exit code of 128 + N says: a shell (a wrapper script, ``sh -c``)
    whose command was killed by signal N exits so. A tool killed for memory
    under ``sh -c`` read "exited with code 137", which says nothing of memory."""
    number = code - 128
    if not 0 < number < signal.NSIG:
        return ""
    try:
        name = signal.Signals(number).name
    except ValueError:
        return ""
    said = f" (128 + {number}: what a shell exits with when a command it ran was killed by {name}"
    if number == signal.SIGKILL:
        said += ", usually the out-of-memory killer; check `dmesg` and the memory the step declares"
    return f"{said})"
