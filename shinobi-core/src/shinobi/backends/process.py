"""Spawning a step's process and tearing its whole session down.

Every step runs in its own session (``start_new_session``) so a Ctrl-C reaches
ninja alone; ninja then stops the step deliberately. Processes are found by
session id in /proc rather than by process group, because shells and tools move
grandchildren into groups of their own but rarely into new sessions; a process
that leaves the session with ``setsid()`` is still found by the teardown tag in
its environment (see :mod:`shinobi.teardown`).

The step's stdout and stderr go through pipes into log files that are created
on the first byte (see :mod:`shinobi.backends.streams`): a silent step costs no
file, and what a tool printed is on disk as soon as ninja has read it.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shinobi import teardown
from shinobi.backends.base import BackendRun, PathUse, RunControl
from shinobi.backends.shebang import crlf_advice, crlf_shebang
from shinobi.backends.spawn import start
from shinobi.backends.streams import MAX_CAPTURE, StreamLog, pump
from shinobi.errors import ShinobiError
from shinobi.fd_limit import exhausted

if TYPE_CHECKING:
    from shinobi.stale import Holder

__all__ = [
    "MAX_CAPTURE",
    "SETTLE",
    "UnpassableArgument",
    "bad_variable",
    "read_log",
    "run_process",
    "script_interpreter",
    "session_members",
    "terminate_session",
    "unpassable",
]


def session_members(sid: int) -> list[int]:
    """Live (non-zombie) pids whose session id is ``sid``."""
    return teardown.process_table().members(sid, None)


def terminate_session(
    sid: int,
    grace: float,
    kill_wait: float | None = None,
    tag: str | None = None,
    hurry: threading.Event | None = None,
) -> tuple[int, ...]:
    """SIGTERM every process of session ``sid`` (and every one carrying ``tag``),
    wait ``grace``, then SIGKILL.

    Returns only when they are all gone, or with the pids that survived
    SIGKILL for ``kill_wait`` seconds (a process in uninterruptible I/O; the
    default is :data:`shinobi.teardown.KILL_WAIT`).
    """
    table = teardown.process_table()
    return teardown.terminate(lambda: table.members(sid, tag), grace, kill_wait, table, hurry)


#: Seconds a process a step left running may take to finish writing the step's
#: output after the step's command exited, before the step is failed for it;
#: also how long such a process is watched for opening an output at all.
SETTLE = 2.0

#: How many of the processes a step left running its warning names.
_NAMED = 3


def _group_left(pid: int) -> bool:
    """Whether anything is left in the process group the step's leader made.

    One system call, so a step that left nothing behind (nearly all of them)
    pays nothing more. The kernel does not reuse a pid still in use as a group
    id, so the answer is about the step even after its leader was reaped.
    """
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _left_behind(pid: int, tag: str, held: bool) -> list[int]:
    """The processes a step whose command has exited left running (noted for teardown).

    Looked for in /proc only when something is left in the step's process
    group or holds its stdout or stderr (``held``), so a step that left
    nothing (nearly all of them) pays one system call.
    """
    if not (held or _group_left(pid)):
        return []
    left = teardown.process_table().members(pid, tag)
    teardown.note_leftovers(left, tag)
    return left


@dataclass(slots=True)
class _Settled:
    """What the processes a step left running did while they were watched.

    ``writers``: those still writing an output when the watch ended (the step
    fails); ``left``: those still running then (the step warns). Not frozen:
    nothing assigns to one, and frozen costs every command's start-up ~0.5 ms.
    """

    writers: list[Holder]
    left: list[int]


def _watch_leftovers(
    pid: int, tag: str, outputs: Sequence[PathUse], left: list[int], control: RunControl
) -> _Settled:
    """Watch what a step that exited 0 left running, until it is gone or settled.

    A process the step started may hold an output open at exit (``tool >
    out.ms &``) or open one a moment later (``sleep 1; echo late >> out``);
    either way the product is not finished. So the leftovers are watched for
    up to :data:`SETTLE` seconds, and one seen writing an output gets
    :data:`SETTLE` seconds from then to finish. Only a step that left
    something running and writes files gets here.
    """
    from shinobi.stale import writers_among

    table = teardown.process_table()
    watch_until = time.monotonic() + SETTLE
    write_until: float | None = None
    while True:
        writers = writers_among(left, outputs)
        now = time.monotonic()
        if writers and write_until is None:
            write_until = now + SETTLE
        until = write_until if writers and write_until is not None else watch_until
        if now >= until or control.stopping():
            return _Settled(writers, left)
        time.sleep(0.05)
        left = table.members(pid, tag)
        if not left:
            return _Settled([], [])


def _writes_files(outputs: Sequence[PathUse]) -> bool:
    """Whether a step has paths it writes (an output, or an input it changes)."""
    return any(use.role == "output" or use.mutable for use in outputs)


def _unfinished(writers: list[Holder]) -> str:
    """Why a step whose leftover ``writers`` still write its output failed."""
    first = writers[0]
    pids = ", ".join(str(p) for p in sorted({w.pid for w in writers}))
    return (
        f"exited with code 0 but left {first.describe()} still writing its output"
        f" {first.path!r}, so that output is unfinished; make the step wait for what it"
        f" starts, or wait for pid(s) {pids} to end and run again"
    )


def _described(pids: list[int]) -> tuple[str, ...]:
    """The first of ``pids`` as ``pid N (command)``, for the step's warning."""
    from shinobi.stale import command_of

    shown = tuple(f"pid {p} ({command_of(p)})" for p in sorted(pids)[:_NAMED])
    more = len(pids) - len(shown)
    return (*shown, f"{more} more") if more > 0 else shown


def _unfinished_output(
    pid: int, tag: str, outputs: Sequence[PathUse], left: list[int], control: RunControl
) -> tuple[str | None, tuple[str, ...]]:
    """Why the step's output is not finished though its command exited 0 (or
    None), and the processes it left running that may still change it.

    A background process the step started (``tool > out.ms &``, a daemon that
    goes on writing) that writes an output after the command exited means the
    product is incomplete: reporting the step done would let the next step,
    and the step cache, take a half-written file. ``left``: the step's
    processes still running; none (nearly every step) costs nothing here.
    """
    if not left or not _writes_files(outputs):
        return None, ()
    settled = _watch_leftovers(pid, tag, outputs, left, control)
    if settled.writers:
        return _unfinished(settled.writers), ()
    return None, _described(settled.left) if settled.left else ()


def _stop_left_behind(
    pid: int, tag: str, left: list[int], control: RunControl
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Stop what a step that failed by itself left running: the processes
    stopped (``pid N (command)``), and those that would not die.

    A failed step's background worker goes on writing after ninja has moved
    on or exited: into what the next step reads, or into the output the next
    run writes again, which then holds lines of both and is cached as done.
    Nothing a failed step was making is wanted, so unlike a step that exited
    0 (whose server may be meant to outlive it) none of it is kept. ``left``:
    the step's processes still running; none (nearly every step) costs nothing.
    """
    if not left:
        return (), ()
    stopped = _described(left)  # named while they still have a command line
    return stopped, teardown.stop_left_behind(pid, tag, left, control.grace, control.hurry)


def read_log(path: str, since: int = 0, limit: int = MAX_CAPTURE) -> str:
    """A log file's text from byte ``since`` on (what one attempt of a step added
    to a log that gathers every attempt), at most the last ``limit`` bytes."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(since, size - limit))
            data = fh.read()
    except FileNotFoundError:
        return ""
    return data.decode("utf-8", errors="replace")


def _located(program: str, cwd: str, path: str | None) -> str | None:
    """The file the kernel was asked to run, when there is one (None: nothing there).

    A bare name is looked for on the child's ``PATH`` (``path``), as exec did;
    a name with a slash is relative to the step's directory.
    """
    if os.sep in program:
        found = os.path.join(cwd, program)
        return found if os.path.lexists(found) else None
    import shutil

    return shutil.which(program, mode=os.F_OK, path=path)


#: The second line of the launcher pip (distlib) writes instead of a ``#!``
#: line when the interpreter's path has a space or is too long for the
#: kernel's ``#!`` limit: ``'''exec' "/venv dir/bin/python" "$0" "$@"``.
_SH_LAUNCHER = b"'''exec' "


def script_interpreter(script: str) -> str | None:
    """The interpreter a script starts (None: none named, or unreadable).

    That is what its ``#!`` line names, or for pip's ``/bin/sh`` launcher the
    Python its second line execs, which is what a copied or moved venv gets
    wrong in the same way.
    """
    try:
        with open(script, "rb") as fh:
            head = fh.readline(512)
            second = fh.readline(4096) if head.rstrip() == b"#!/bin/sh" else b""
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    if second.startswith(_SH_LAUNCHER):
        import shlex

        try:
            launched = shlex.split(os.fsdecode(second))
        except ValueError:  # not the launcher after all
            launched = []
        if len(launched) > 1 and launched[0] == "exec":
            # uv's relocatable launcher works its Python out when it runs
            # ("$(dirname -- ...)/python"): no path here to judge
            return None if "$" in launched[1] or "`" in launched[1] else launched[1]
    words = head[2:].split()
    return os.fsdecode(words[0]) if words else None


def _not_started(program: str, exc: OSError, cwd: str = ".", path: str | None = None) -> BackendRun:
    """The run of a program the kernel would not start, in the user's terms.

    ENOENT for a file that exists means its ``#!`` interpreter is missing (a
    venv that was moved, a Python that was removed): saying "command not
    found" there sends the user looking for the wrong file.
    """
    found = _located(program, cwd, path)
    if isinstance(exc, FileNotFoundError) and found is not None:
        code, reason, message = 127, *_unstartable_file(program, found)
    elif isinstance(exc, FileNotFoundError) and os.sep in program:  # a path: PATH plays no part
        code, reason = 127, f"no such program: {program}"
        message = f"cannot run {program!r}: there is no such file (check the path)"
    elif isinstance(exc, FileNotFoundError):
        code, reason = 127, f"command not found: {program}"
        message = f"command not found: {program!r} (is it installed and on PATH?)"
    elif isinstance(exc, PermissionError) and found is not None and os.path.isdir(found):
        code, reason = 126, f"not a program: {program} is a directory"
        message = f"cannot run {program!r}: it is a directory, not a program"
    elif isinstance(exc, PermissionError):
        code, reason = 126, f"permission denied: {program}"
        message = f"permission denied running {program!r} (is it executable?)"
    elif exc.errno == errno.E2BIG:  # thousands of inputs, each a word (or a --mount)
        fix = (
            "its command line is longer than this system takes (Argument list too long);"
            " give the tool its many values in a file it reads, or group such inputs under"
            " one Directory input"
        )
        code, reason, message = (
            126,
            f"cannot run {program}: {fix}",
            f"cannot run {program!r}: {fix}",
        )
    elif (limit := exhausted(exc)) is not None:  # the machine's, not the program's
        code, reason = 126, limit
        message = f"cannot run {program!r}: {limit}"
    else:  # e.g. a script without a #! line (ENOEXEC)
        code, reason = 126, f"cannot run {program}: {exc.strerror}"
        message = f"cannot run {program!r}: {exc.strerror}"
        if exc.errno == errno.ENOEXEC:
            hint = "; a script needs a #! line naming its interpreter (#!/bin/sh)"
            reason += hint
            message += hint
    return BackendRun(returncode=code, stderr=message + "\n", reason=reason)


def _unstartable_file(program: str, found: str) -> tuple[str, str]:
    """(reason, message) for a ``program`` that is there but that exec calls missing."""
    interpreter = script_interpreter(found) if os.path.exists(found) else None
    if interpreter is not None and crlf_shebang(found):
        return crlf_advice(program), f"cannot run {program!r}: {crlf_advice(program)}"
    if interpreter is None:  # a dangling symlink, or a binary whose loader is missing
        return (
            f"cannot run {program}: {found} or what it needs is missing",
            f"cannot run {program!r}: {found} is a broken link or lacks its loader",
        )
    return (
        f"interpreter not found: {interpreter} (the #! line of {program})",
        f"cannot run {program!r}: its #! line names {interpreter!r}, which does not exist"
        " (a moved or rebuilt venv? reinstall the tool, or fix that line)",
    )


def _child_path(child_env: Mapping[bytes, bytes]) -> str | None:
    """The ``PATH`` the step's program was looked up on (None: the child had none)."""
    value = child_env.get(b"PATH")
    return os.fsdecode(value) if value is not None else None


def _crlf_exit(program: str, cwd: str, path: str | None) -> str | None:
    """Why a program that started exited 127, when its ``#!`` line ends in ``\r``
    (``/usr/bin/env`` looked for ``python3\r``); None otherwise. Looked at only
    for that exit code, so a step that runs pays nothing."""
    found = _located(program, cwd, path)
    if found is None or not crlf_shebang(found):
        return None
    return f"exited with code 127: {crlf_advice(program)}"


class UnpassableArgument(ShinobiError, ValueError):
    """An argv or environment no process can be given (a NUL byte, a name with ``=``).

    Still a ValueError, as ``subprocess`` raises, but one the run reports in
    the user's words rather than as an internal error.
    """


def unpassable(
    argv: Sequence[str], env: Mapping[str, object] | None = None
) -> UnpassableArgument | None:
    """What in ``argv`` or ``env`` no program can be given (None: nothing).

    Looked for only once a start has failed, so a step that starts pays nothing.
    """
    where = next((i for i, word in enumerate(argv) if "\0" in word), None)
    if where is not None:
        what = "the command" if where == 0 else f"argument {where}"
        problem = f"{what} contains a NUL byte, which no program can be passed (check its value)"
    else:
        problem = next(
            (p for name, value in (env or {}).items() if (p := bad_variable(name, value))), ""
        ) or _unencodable(argv, env)
    if not problem:
        return None
    return UnpassableArgument(f"cannot run {argv[0]!r}: {problem}")


def _unencodable(argv: Sequence[str], env: Mapping[str, object] | None) -> str:
    """A word no program can be given in this locale: one its encoding (Latin-1,
    say, on an old cluster) has no bytes for. It was blamed on the backend."""
    words = [(f"argument {i}" if i else "the command", w) for i, w in enumerate(argv)]
    words += [(f"environment variable {k!r}", f"{k}={v}") for k, v in (env or {}).items()]
    for what, word in words:
        try:
            os.fsencode(word)
        except UnicodeEncodeError as exc:
            bad = word[exc.start : exc.end]
            return (
                f"{what} holds {bad!r}, which this locale's encoding"
                f" ({sys.getfilesystemencoding()}) cannot pass; run ninja under a UTF-8"
                " locale (LANG=C.UTF-8)"
            )
    return ""


def bad_variable(name: object, value: object) -> str | None:
    """Why ``name=value`` cannot be in a process's environment, or None when it can."""
    if not isinstance(name, str) or not isinstance(value, str):
        return f"environment variable {name!r} = {value!r} is not text (write it as a string)"
    if not name or "=" in name or "\0" in name:
        return f"{name!r} is not a valid environment variable name"
    if "\0" in value:
        return f"environment variable {name!r} contains a NUL byte"
    return None


_TAG_KEY = os.fsencode(teardown.TAG_VARIABLE)
_null_fd = -1


def _devnull() -> int:
    """One /dev/null for every step's stdin, opened once (the child gets a copy)."""
    global _null_fd
    if _null_fd < 0:
        _null_fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    return _null_fd


def _environment(env: Mapping[str, str] | None) -> dict[bytes, bytes]:
    """The child's environment as bytes, built for every step.

    Copying ``os.environ`` decodes and re-encodes every variable, and even
    ``os.environb`` goes through a Python-level mapping per item; CPython keeps
    the bytes in ``os.environ._data``, which copies in one C call. The public
    route is the fallback.
    """
    if env is None:
        data = getattr(os.environ, "_data", None)
        return dict(data) if isinstance(data, dict) else dict(os.environb)
    return {os.fsencode(k): os.fsencode(v) for k, v in env.items()}


def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    control: RunControl,
    env: Mapping[str, str] | None = None,
    stdout_path: str | None = None,
    stderr_path: str | None = None,
    before_kill: Callable[[], None] | None = None,
    outputs: Sequence[PathUse] = (),
    started: Callable[[int], None] | None = None,
    stdout_capture: int = MAX_CAPTURE,
    stderr_capture: int = MAX_CAPTURE,
) -> BackendRun:
    """Run ``argv`` in a new session, blocking; tear it down if the run is cancelled.

    ``env`` is the complete environment (None inherits ninja's). ``before_kill``
    runs first on cancellation, for payloads that are not our descendants
    (``docker rm -f`` of a container owned by containerd-shim). ``outputs``
    are the paths the step writes: a step that exits 0 while a process it left
    running still writes one of them fails (see :func:`_unfinished_output`).
    ``started`` is told the child's pid once it runs, for a backend that
    watches the payload while it runs (a memory-stall watchdog, say). A step
    that fails by itself has what it left running stopped before it returns
    (see :func:`_stop_left_behind`). ``stdout_capture`` and ``stderr_capture``:
    the invocation's, the bytes of each stream the result keeps (see
    :class:`~shinobi.backends.base.Invocation`).
    """
    if control.stopping():
        return BackendRun(returncode=-signal.SIGTERM, signal=signal.SIGTERM, cancelled=True)
    tag = teardown.new_tag(control.tag_prefix)
    try:
        child_env = _environment(env)
    except (TypeError, UnicodeEncodeError):  # not text, or text the locale cannot encode
        raise unpassable(argv, env) or TypeError(
            f"cannot encode the environment of {argv[0]!r}"
        ) from None
    child_env[_TAG_KEY] = tag.encode()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    stdout = StreamLog(stdout_path, control.warn, stdout_capture)
    stderr = StreamLog(stderr_path, control.warn, stderr_capture)
    try:
        proc = start(
            argv, cwd=cwd, env=child_env, stdin=_devnull(), stdout=out_write, stderr=err_write
        )
    except BaseException as exc:  # a ValueError (a NUL byte in argv) too: no pipe left open
        for fd in (out_read, err_read, out_write, err_write):
            os.close(fd)
        unusable = unpassable(argv, env) if isinstance(exc, ValueError) else None
        if unusable is not None:
            raise unusable from None
        if not isinstance(exc, OSError):
            raise
        refused = _not_started(argv[0], exc, cwd, _child_path(child_env))
        stderr.write(refused.stderr.encode())  # the log says why, as a tool would
        for log in (stdout, stderr):
            log.close()
        return refused

    survivors: tuple[int, ...] = ()
    # The stopper runs on the coordinating thread; this thread must not report
    # the step until it has finished, or the result would miss the survivors.
    # A stopper that starts before the step returned holds ``stopping`` (taken
    # under ``state``) until it is done; the step waits for it by taking it.
    state = threading.Lock()
    stopping = threading.Lock()
    returned = False

    def stop() -> tuple[int, ...]:
        nonlocal survivors
        with state:
            if returned:
                return ()
            stopping.acquire()
        try:
            if before_kill is not None:
                try:
                    before_kill()
                except Exception as exc:  # the processes below still get stopped
                    control.warn(f"stopping the payload of {argv[0]!r} failed: {exc}")
            survivors = terminate_session(proc.pid, control.grace, tag=tag, hurry=control.hurry)
        finally:
            stopping.release()
        return survivors

    if started is not None:
        started(proc.pid)
    unregister = control.on_cancel(stop)
    try:
        returncode = pump(proc, {out_read: stdout, err_read: stderr}, (out_write, err_write))
    finally:
        with state:
            returned = True
        unregister()
        with stopping:  # a stopper already under way finishes first
            pass
    left = _left_behind(proc.pid, tag, held=not (stdout.ended and stderr.ended))
    reason: str | None = None
    left_running: tuple[str, ...] = ()
    stopped: tuple[str, ...] = ()
    if returncode == 0 and not control.stopping():
        reason, left_running = _unfinished_output(proc.pid, tag, outputs, left, control)
    elif not control.stopping():  # failed by itself: an interrupt's teardown has the rest
        stopped, survivors = _stop_left_behind(proc.pid, tag, left, control)
    if left and not stopped and control.stopping():
        # A stop came once the command had exited (or while what it left was
        # watched): the step's own stopper was no longer there to take what it
        # left. That goes now, before the step returns and its output is set
        # aside: a writer still alive (``tool >> out &``) made a new file under
        # the output's name, which the next run built on and called done.
        stopped, more = _stop_left_behind(proc.pid, tag, left, control)
        survivors = tuple(sorted({*survivors, *more}))
    if reason is not None:  # an unfinished output: the tool's own 0 cannot be reported as one
        returncode = 1
    elif returncode == 127:  # ``#!/usr/bin/env python3\r``: env ran, and found no python3\r
        reason = _crlf_exit(argv[0], cwd, _child_path(child_env))
    return BackendRun(
        returncode=returncode,
        reason=reason,
        stdout=stdout.text(),
        stderr=stderr.text(),
        signal=-returncode if returncode < 0 else None,
        cancelled=control.stopping(),
        undying=survivors,
        left_running=left_running,
        stopped=stopped,
    )
