"""``ninja``: the entry point. Commands are imported lazily so ``--help`` is instant.

Every error a user can cause is printed as one line naming the problem and the
fix, with exit code 2 for bad usage or an invalid recipe and 1 for a failed
step; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import importlib
import itertools
import os
import sys
from typing import Any, NoReturn

import click

from shinobi.cli import collector
from shinobi.cli.standard_output import StdoutUnwritable, guarded_stdout, quiet_failing_stderr
from shinobi.cli.top_help import (
    COMMANDS,
    DEBUG_HELP,
    HELP,
    HELP_OPTION_NAMES,
    MAX_CONTENT_WIDTH,
    program,
    quiet_stdout,
)
from shinobi.errors import ENVIRONMENT_EXIT

__all__ = [
    "COMMANDS",
    "ENVIRONMENT_EXIT",
    "cli",
    "file_in_the_way",
    "main",
    "report_failure",
    "settle_exit_status",
]


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        module, attribute, _ = entry
        try:
            loaded: click.Command = getattr(importlib.import_module(module), attribute)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                return _unavailable(name)
            raise
        return loaded

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        # click suggests from the commands it holds, and a lazy group holds none
        # until one is asked for: `ninja rum` should still hear of `run`
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:
            if exc.possibilities:
                raise
            raise click.exceptions.NoSuchCommand(
                exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx
            ) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, _, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _unavailable(name: str) -> click.Command:
    @click.command(name=name, help=COMMANDS[name][2])
    def missing() -> None:
        from shinobi.errors import UsageError

        raise UsageError(f"'ninja {name}' is not available in this installation")

    return missing


@click.group(
    cls=LazyGroup,
    help=HELP,
    context_settings={
        "help_option_names": list(HELP_OPTION_NAMES),
        "max_content_width": MAX_CONTENT_WIDTH,
    },
)
@click.version_option(package_name="shinobi-core")  # named as invoked (see top_help.program)
@click.option("--debug", is_flag=True, help=DEBUG_HELP)
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    # The help is shinobi.cli.top_help.HELP, which ``ninja --help`` shows without click.
    ctx.obj = {"debug": debug}


def _debug_requested(argv: list[str]) -> bool:
    """``--debug`` where it belongs, before the command, or ``SHINOBI_DEBUG`` set."""
    leading = itertools.takewhile(lambda arg: arg.startswith("-"), argv)
    said = os.environ.get("SHINOBI_DEBUG", "").strip().lower()
    # the words the configuration takes for a yes: `SHINOBI_DEBUG=false` is a no
    return "--debug" in leading or said in ("1", "true", "yes", "on", "t", "y")


def _misplaced_debug(argv: list[str]) -> str | None:
    """A note for ``--debug`` written after the command: where a recipe failed
    to load, click never got to refuse it, and it would pass unremarked."""
    command = _command_of(argv)
    if command is None or "--debug" not in argv[argv.index(command) :]:
        return None
    return (
        f"{_prog}: note: --debug is an option of {_prog} itself: put it first"
        f" ({_prog} --debug {command} ...)"
    )


def _command_of(argv: list[str]) -> str | None:
    """The command ``argv`` asks for (``run``), after ninja's own options."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


_exit_hook_registered = False


def _register_exit_hook() -> None:
    global _exit_hook_registered
    if not _exit_hook_registered:
        _exit_hook_registered = True
        atexit.register(collector.at_exit)


#: Options of ``ninja`` itself, which people also write after the command.
GLOBAL_OPTIONS = ("--debug", "--version")


def _usage_line(exc: click.UsageError) -> str:
    """click's message for a bad option or argument, on one line, with where to look.

    click would print a usage block and a "Try --help" line around it; every
    other error of ninja is one line, and scripts and people read it the same way.
    """
    from shinobi.cli.recipe_options import TARGET_KEY

    message = " ".join(exc.format_message().split()).rstrip(".")
    if isinstance(exc, click.NoSuchOption) and exc.option_name == "--remote":
        return (
            "--remote is planned, not implemented yet (shinobi-remote has no launcher):"
            f" run on this machine, or offload with --backend slurm or '{_prog} compile'"
        )
    if isinstance(exc, click.NoSuchOption) and exc.option_name == "--version":
        return f"--version is an option of {_prog} itself: {_prog} --version"
    if isinstance(exc, click.NoSuchOption) and exc.option_name in GLOBAL_OPTIONS:
        command = exc.ctx.command_path.partition(" ")[2] if exc.ctx is not None else ""
        name = exc.option_name
        return f"{name} is an option of {_prog} itself: put it first ({_prog} {name} {command} ...)"
    ctx = exc.ctx
    path = ctx.command_path if ctx is not None else _prog
    if ctx is not None and TARGET_KEY in ctx.meta:  # a recipe's inputs are in its own --help
        path = f"{path} {ctx.meta[TARGET_KEY]}"
    return f"{message} (see '{path} --help')"


def _asked_for_help(exc: click.UsageError) -> bool:
    """A group called without its command: click (8.2 on) raises its help as an error.

    That help is many lines; squeezed into one error line it cannot be read.
    It still goes to stderr with exit 2, since no command ran.
    """
    no_args = getattr(click.exceptions, "NoArgsIsHelpError", None)
    return no_args is not None and isinstance(exc, no_args)


#: Errors that say something about this machine (a permission, a full disk, a
#: path that is not what it should be), never about ninja's own code: reported
#: as one line, not as an internal error.
_REFUSALS = {
    errno.EACCES: "check the permissions there",
    errno.EPERM: "check the permissions there",
    errno.ENOENT: "",
    errno.ENOTDIR: "a file stands where a directory is needed",
    errno.EISDIR: "a directory stands where a file is needed",
    errno.ENOSPC: "free some space there",
    errno.EFBIG: "a file-size limit stopped it: see `ulimit -f`",
    errno.EDQUOT: "free some space there, or ask for a larger quota",
    errno.EROFS: "point --workdir (or the setting that names it) somewhere writable",
    errno.ENAMETOOLONG: "use a shorter path",
    errno.ELOOP: "a symbolic link there points back at itself",
    errno.EMFILE: "raise the open-file limit (ulimit -n)",
    errno.ENFILE: "the system's open-file table is full",
    errno.EIO: "the disk or network file system reported an error",
    errno.EEXIST: "",  # said by _refusal: a dangling link, or a file in the way
}


#: The commands that write their records (a run's folder, a launch's scripts and
#: handle) in ``<workdir>/.shinobi``, which ``--workdir`` moves elsewhere.
_RECORDING = ("run", "compile")


def _refusal(exc: OSError, command: str | None = None) -> str:
    """A refusal by the machine as one line: what, where, and what to look at;
    ``command``, the one that met it."""
    try:
        os.getcwd()
    except OSError:
        return "the current directory no longer exists; cd to one that does and run again"
    where = f": {exc.filename}" if exc.filename else ""
    hint = _REFUSALS.get(exc.errno or 0, "")
    if exc.errno == errno.ENOTDIR and isinstance(exc.filename, str):
        blocking = file_in_the_way(exc.filename)
        if blocking is not None:
            hint = f"{blocking} is a file, where a directory is needed"
    if exc.errno == errno.EEXIST and isinstance(exc.filename, str):
        hint = _why_it_exists(exc.filename)
    if command in _RECORDING and exc.errno in (errno.EACCES, errno.EPERM):
        hint += _records_elsewhere(exc.filename)
    return f"{exc.strerror or exc}{where}" + (f" ({hint})" if hint else "")


def _records_elsewhere(path: object) -> str:
    """The way round a project directory this user may not write (a read-only
    checkout, another user's tree), when ``path`` is where ninja keeps its
    records: the steps may well write elsewhere, and only ``.shinobi/`` was in the way."""
    from pathlib import Path

    if not isinstance(path, str) or ".shinobi" not in Path(path).parts:
        return ""
    return ", or keep ninja's records (.shinobi/) elsewhere with --workdir or execution.workdir"


def _why_it_exists(path: str) -> str:
    """What stands at ``path``, which ninja had to create: a symbolic link to nowhere
    (records moved to a disk that is not mounted), or a file."""
    from shinobi.local_runs import dangling_link

    said = dangling_link(path)
    if said is not None:
        return said
    if os.path.lexists(path) and not os.path.isdir(path):
        return "a file stands where a directory is needed"
    return ""


def file_in_the_way(path: str) -> str | None:
    """The outermost part of ``path`` that is not a directory (ENOTDIR names the
    path asked for, not the file that stopped it)."""
    from pathlib import Path

    full = Path(os.path.abspath(path))
    for candidate in reversed([full, *full.parents]):
        if not os.path.lexists(candidate):
            return None
        if not os.path.isdir(candidate):
            return str(candidate)
    return None


#: The name ninja was called by, for its messages: ``shinobi`` too (the same
#: program, for a machine where the ``ninja`` build tool took that name).
_prog = "ninja"


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI and turn every user-facing error into one line and an exit code.

    Without ``argv`` (the ``ninja`` console script, ``python -m shinobi.cli``)
    the command owns its process; a program that passes ``argv`` gets its
    process back as it was, garbage collector included.
    """
    global _prog
    _register_exit_hook()
    _prog = program(sys.argv[0]) if argv is None and sys.argv else "ninja"
    saved = collector.command_started(own_process=argv is None)
    digits = _whole_ints()
    settle_exit_status(0)  # a program may call main() more than once
    try:
        if argv is not None:
            return _main(list(argv))
        quiet_failing_stderr()  # what a run exits with is not the terminal's to change
        with guarded_stdout():  # a refused write names stdout (see standard_output)
            return _main(sys.argv[1:])
    finally:
        sys.set_int_max_str_digits(digits)
        collector.command_ended(saved)


def _whole_ints() -> int:
    """Lift Python's limit on the digits of an int written as text; returns it.

    A step may well give an int of more than 4300 digits (``10**5000``), and
    ninja writes its outputs as text: on the terminal, in ``--json``, in the
    cache and the manifest, and reads them back. Under the limit (a guard
    against parsing huge untrusted numbers, which ninja's own values are not)
    every one of those raised ValueError after the step had succeeded.
    """
    digits = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    return digits


#: The exit status the running command settled on before printing what led to
#: it (see :func:`settle_exit_status`); 0 until it does.
_settled_status = 0


def settle_exit_status(status: int) -> None:
    """Say the command's exit status before printing what decided it (a failed
    run's stderr tail, an interrupted run's JSON, a failed launch's table).

    A reader that goes away meanwhile (``| head -1``, ``| grep -q``) ends the
    printing, not the command's word: it still exits with ``status``, where a
    command that had nothing to report exits 0.
    """
    global _settled_status
    _settled_status = status


def _reader_gone() -> bool:
    """Whether click ended the command because stdout's reader went away (EPIPE):
    it then wraps stdout and exits 1, which says a step failed. (Named, not
    imported: click deprecates importing the wrapper.)"""
    return type(sys.stdout).__name__.lstrip("_") == "PacifyFlushWrapper"


def _main(args: list[str]) -> Any:
    try:
        return cli.main(args=args, prog_name=_prog, standalone_mode=False)
    except SystemExit as exc:
        if exc.code == 1 and _reader_gone():  # `ninja runs | head -1`: no failure
            quiet_stdout()
            sys.exit(_settled_status)
        raise
    except click.exceptions.Abort:
        click.echo(f"{_prog}: aborted", err=True)
        sys.exit(130)
    except click.UsageError as exc:
        if _asked_for_help(exc) and exc.ctx is not None:  # `ninja`, `ninja cache`
            click.echo(exc.ctx.get_help(), err=True)  # the help, not an error line
        else:
            click.echo(f"{_prog}: error: {_usage_line(exc)}", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except BrokenPipeError:  # the same, raised past click
        quiet_stdout()
        sys.exit(_settled_status)
    except Exception as exc:
        _fail(exc, args)


def report_failure(exc: Exception, args: list[str], prog: str) -> NoReturn:
    """What ninja says of ``exc``, raised as ``prog`` answered ``args`` without
    click (see :func:`shinobi.cli.top_help.fast_path`), and its exit status."""
    global _prog
    _prog = prog
    _fail(exc, args)


def _fail(exc: Exception, args: list[str]) -> NoReturn:
    """An error the command did not handle: one line and an exit status (or, with
    ``--debug``, the traceback first)."""
    from shinobi.errors import ConfigError, ShinobiError

    debug = _debug_requested(args)
    if debug:  # the traceback, then the same line and exit status as without
        import traceback

        traceback.print_exc()
    if isinstance(exc, ShinobiError):
        said = str(exc)
        if isinstance(exc, ConfigError):  # a plugin's word on a setting: whose file
            from shinobi.config import said_where

            said = said_where(said)
        with contextlib.suppress(OSError):  # stderr may be a terminal that is gone
            click.echo(f"{_prog}: error: {said}", err=True)
            misplaced = None if debug else _misplaced_debug(args)
            if misplaced:
                click.echo(misplaced, err=True)
        sys.exit(exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        click.echo(f"{_prog}: interrupted", err=True)
        sys.exit(130)
    if isinstance(exc, StdoutUnwritable):  # what the command had to print is lost
        quiet_stdout()  # nothing more fails there, the flush at exit included
        with contextlib.suppress(OSError):
            click.echo(f"{_prog}: error: {exc}", err=True)
        sys.exit(ENVIRONMENT_EXIT)
    if isinstance(exc, OSError) and exc.errno in _REFUSALS:
        with contextlib.suppress(OSError):
            click.echo(f"{_prog}: error: {_refusal(exc, _command_of(args))}", err=True)
        sys.exit(ENVIRONMENT_EXIT)
    hint = "" if debug else "rerun with --debug for the traceback, and "
    click.echo(
        f"{_prog}: internal error: {type(exc).__name__}: {exc} ({hint}please report it)",
        err=True,
    )
    sys.exit(70)
