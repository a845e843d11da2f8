"""``ninja compile FILE.py:NAME``: a recipe as a cluster workflow; ``--submit`` launches it.

Without ``--submit`` nothing needs a cluster: the scripts are printed (or
written with ``--output``). With it, the jobs are handed to the engine in
dependency order, the launch's handle is written atomically and recorded in
the launches index, and ninja exits: nothing keeps running here.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import click

from shinobi.cli import collector
from shinobi.cli.machine_output import MachineOutputCommand, emit, printing_a_record
from shinobi.cli.recipe_options import RecipeCommand, recipe_values
from shinobi.offload.wrapping import AUTO, RUNTIME_CHOICES
from shinobi.wording import counted, listed

__all__ = ["command"]


class _CompileCommand(MachineOutputCommand, RecipeCommand):
    """stdout holds the scripts alone (or the explanation, or the launch, as JSON
    with ``--json``): the recipe module, imported while the arguments are parsed,
    may print, and that goes to stderr."""

    def prints_for_machines(self, args: Sequence[str]) -> bool:
        return True


@click.command(
    cls=_CompileCommand, short_help="Compile a recipe to a cluster workflow; --submit to launch it."
)
@click.argument("target", metavar="FILE.py:NAME")
@click.option(
    "--engine",
    default="slurm",
    show_default=True,
    metavar="NAME",
    help="The offload engine (installed by a plugin: slurm comes with shinobi-slurm).",
)
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Where .shinobi/<recipe>/<run-id>/ (scripts, logs, handle) goes, on storage the"
    " compute nodes share;"
    " default: execution.workdir if configured, else the current directory.",
)
@click.option(
    "--container-runtime",
    type=click.Choice(RUNTIME_CHOICES),
    default=AUTO,
    show_default=True,
    help="Run each step that has an image in it with this runtime, or on the node itself"
    " (none); auto: in the container backend the step runs in under ninja run.",
)
@click.option(
    "--submit", is_flag=True, help="Submit the workflow and detach; write the launch's handle."
)
@click.option(
    "--explain",
    is_flag=True,
    help="Say why each edge exists (or why the recipe is refused) instead of printing scripts.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False),
    callback=lambda ctx, param, value: _output_directory(value),
    help="Write the scripts into this directory instead of printing them.",
)
@click.option("--json", "as_json", is_flag=True, help="With --submit, print the launch as JSON.")
@click.pass_context
def command(
    ctx: click.Context,
    target: str,
    engine: str,
    workdir: Path | None,
    container_runtime: str,
    submit: bool,
    explain: bool,
    output: Path | None,
    as_json: bool,
    **params: Any,
) -> None:
    """Compile the recipe NAME in FILE.py into a workflow for a cluster engine.

    Only purely declarative recipes can be offloaded; a refusal lists every
    reason (exit 2). The recipe's own inputs are options: see them with
    `ninja compile FILE.py:NAME --help`.
    """
    from shinobi.backends.registry import OFFLOAD, make_plugin
    from shinobi.cli.named_config import warn_if_named_file_missing
    from shinobi.config import load_config
    from shinobi.errors import UsageError
    from shinobi.graph import build_graph
    from shinobi.offload.base import CompileOptions, OffloadRefused, OffloadTarget
    from shinobi.plan import check_statically
    from shinobi.runner import as_recipe, validate_recipe_inputs
    from shinobi.session import new_run_id

    if as_json and not submit:
        raise UsageError(
            "--json prints the launch, so it needs --submit; drop --json to see the scripts"
        )
    recipe, values = recipe_values(ctx, params)
    recipe = as_recipe(recipe)
    config = load_config()
    warn_if_named_file_missing()
    with collector.building(last=True):  # shinobi's own objects (see shinobi.cli.collector)
        inputs = validate_recipe_inputs(recipe, values)
        graph = build_graph(recipe)
        cwd = Path.cwd().resolve()
        # One static plan serves the checks and the compiler.
        plan = check_statically(graph, inputs, str(cwd), keep_plan=True)
        assert plan is not None
        # What shinobi.launch.find.workspace() answers, from the configuration
        # loaded above: importing it (and the launches index) for this alone cost
        # every compile ~2 ms, and loading the configuration again.
        root = Path(workdir).resolve() if workdir is not None else None
        options = CompileOptions(
            workdir=root or config.execution.workdir_path() or cwd,
            cwd=cwd,
            run_id=new_run_id(),
            container_runtime=container_runtime,
            target=_absolute_target(target),
            default_backend=config.backend.default,
        )
        offload = make_plugin(OFFLOAD, engine, OffloadTarget, config.backend_settings(engine))
        config.check_backend_table(engine, offload.settings_keys)
        try:
            workflow = offload.compile(plan, options)
        except OffloadRefused as exc:
            _print_refusals(exc, explain)
            raise
        if not explain:  # the explanation lists them itself
            for warning in workflow.jobs.warnings:
                click.echo(f"ninja: note: {warning}", err=True)
        if explain and submit and as_json:  # stdout is the launch's JSON, and only that
            click.echo("\n".join(workflow.explain()), err=True)
        elif explain:
            emit("\n".join(workflow.explain()))
        if output is not None:
            parent = output.resolve().parent
            if not parent.exists():  # a typo must not create directories anywhere
                raise UsageError(
                    f"cannot write the scripts to {output}: {output.parent} does not exist"
                )
            if not parent.is_dir():
                raise OSError(errno.ENOTDIR, "cannot write the scripts there", str(output.parent))
            written = workflow.write(output)
            click.echo(f"wrote {counted(len(written.paths), 'script')} to {output}", err=True)
            if written.removed:
                stale = counted(len(written.removed), "script")
                click.echo(f"removed {stale} an earlier compile wrote there", err=True)
            if written.kept:
                names = listed(written.kept, 5, os.path.basename)
                click.echo(
                    f"ninja: note: kept {names}: an earlier compile wrote it there, it was"
                    " changed since, and this compile has no such job; remove it if it is stale"
                    " (submitting the folder's scripts would submit it too)",
                    err=True,
                )
        elif not submit and not explain:
            for part in workflow.rendered_in_parts():  # not one string: see long_output
                emit(part, nl=False)
    if submit:
        _submit(offload, engine, workflow, as_json, config.backend_settings)


def _warn_if_one_runs(offload: Any, handle: Any) -> None:
    """Say so when the recipe's last launch from this workspace still runs: the
    two work on the same paths, and ``ninja status``/``cancel`` of the recipe's
    name will reach only the new one. (A warning: the user may mean it.)"""
    from shinobi.errors import ShinobiError
    from shinobi.launch.handle import HANDLE_NAME, launch_dir, read_handle

    latest = launch_dir(handle.workdir, handle.recipe) / HANDLE_NAME
    try:
        previous = read_handle(latest)
        if previous.engine != handle.engine or offload.status(previous).state != "running":
            return
    except (ShinobiError, OSError, ValueError):  # none, damaged, or Slurm away: say nothing
        return
    click.echo(
        f"ninja: warning: launch {previous.run_id} of {handle.recipe} still runs from this"
        " workspace; both work on the same paths, and its jobs are reached now by"
        f" `ninja status {previous.run_id}` (`ninja cancel {previous.run_id}` stops it)",
        err=True,
    )


def _warn_of_runs(workdir: str, settings: Callable[[str], Mapping[str, Any]]) -> None:
    """Say so when a ``ninja run`` goes in the launch's workdir: its steps and the
    launch's may write the same paths, each taking the other's product for its
    own. Tools or batch jobs a killed run left running refuse the launch, as they
    refuse a run (see :func:`shinobi.live_runs.other_runs`)."""
    from shinobi.live_runs import other_runs
    from shinobi.local_runs import runs_root

    for said in other_runs(runs_root(Path(workdir)), settings):
        click.echo(f"ninja: warning: {said}", err=True)


def _output_directory(value: str | None) -> Path | None:
    """``-o ""`` (an unset shell variable) must not mean the current directory."""
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("an empty path names no directory; use . for this one")
    return Path(value)


def _absolute_target(target: str) -> str:
    path, sep, name = target.rpartition(":")
    return f"{Path(path).resolve()}{sep}{name}" if sep else target


def _print_refusals(exc: Any, explain: bool) -> None:
    click.echo(f"ninja: recipe {exc.recipe!r} cannot be offloaded:", err=True)
    for refusal in exc.refusals:
        click.echo(f"  - {refusal.reason}", err=True)
        click.echo(f"    fix: {refusal.fix}", err=True)
    if explain:
        click.echo(
            "  why: an offloaded workflow runs with no Python behind it, so every job, every"
            " edge and every path handed between steps must be known at compile time.",
            err=True,
        )


@contextlib.contextmanager
def _deferred_interrupts(stop: threading.Event, received: list[int]) -> Iterator[None]:
    """While jobs are handed over, a first Ctrl-C (SIGTERM, SIGHUP) asks the
    submitter to stop once the job being submitted is on record; a second one
    stops it at once. ``received`` gets each signal's number, for the exit code."""
    from shinobi.stop_signals import handled

    def handler(signum: int, _frame: Any) -> None:
        received.append(signum)
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        with contextlib.suppress(OSError):
            click.echo(
                "ninja: stopping once the job being submitted is on record"
                " (interrupt again to stop at once)",
                err=True,
            )

    with handled(handler):
        yield


def _submit(
    offload: Any,
    engine: str,
    workflow: Any,
    as_json: bool,
    settings: Callable[[str], Mapping[str, Any]],
) -> None:
    """Hand ``workflow`` to ``offload`` (the engine ``engine``); what the plugin's
    own code raises is a one-line fault of that engine (see ``plugin_code``)."""
    from shinobi.backends.registry import OFFLOAD, plugin_code
    from shinobi.errors import ShinobiError
    from shinobi.launch.cleanup import remove_launch
    from shinobi.launch.handle import JobJournal, write_handle
    from shinobi.launch.index import record_launch
    from shinobi.launch.submitter import LaunchCancelled

    with plugin_code(OFFLOAD, engine, "new_handle()"):
        handle = offload.new_handle(workflow)
    _warn_of_runs(handle.workdir, settings)
    _warn_if_one_runs(offload, handle)
    write_handle(handle, latest=False)
    try:
        record_launch(handle)
    except OSError as exc:  # nothing submitted yet: no launch to leave behind
        from shinobi.errors import MachineRefused

        with contextlib.suppress(OSError, MachineRefused):  # its files go; not the index
            remove_launch(handle)
        from shinobi.launch.index import index_path

        raise MachineRefused(
            f"cannot record the launch in ninja's index of launches, {index_path()}"
            f" ({exc.strerror or exc}); nothing was submitted: make that directory writable,"
            " or point XDG_STATE_HOME somewhere writable"
        ) from None
    stop = threading.Event()
    received: list[int] = []
    journal = JobJournal(handle, stop)
    # Once the jobs are handed over, a signal is only noted until the launch is on
    # record and said: one that came as the last job went in printed "ninja:
    # aborted" alone, and a user who read that nothing was submitted submitted again.
    with _noted_interrupts(received):
        try:
            with _deferred_interrupts(stop, received), plugin_code(OFFLOAD, engine, "submit()"):
                offload.submit(workflow, handle, journal)
        except LaunchCancelled as exc:  # `ninja cancel` came while jobs were handed over
            journal.close()
            write_handle(handle)  # every job it handed over, on record for status and cancel
            raise LaunchCancelled(f"{exc}: {_cancel_what_was_submitted(handle)}") from None
        except ShinobiError:
            journal.close()
            if not any(job.job_id for job in handle.jobs):
                remove_launch(handle)  # nothing reached the engine: there is no launch
            else:  # what was submitted was cancelled (or the error says how to): on record
                handle.state = "submitted"
                with contextlib.suppress(OSError):  # a full disk: the error says it, not this
                    write_handle(handle)
            raise
        except KeyboardInterrupt:
            journal.close()
            write_handle(handle)
            _say_interrupted(handle, received)
        finally:
            journal.close()
        handle.state = "submitted"
        path = write_handle(handle)
        latest = path.parent.parent / path.name
        with printing_a_record(partial(_handle_kept_in, handle, latest)):  # submitted: exit 0
            _print_launch(handle, latest, as_json)
    if received:  # it came as the last job went in: every one was handed over
        _say_interrupted(handle, received)


def _noted_interrupts(received: list[int]) -> contextlib.AbstractContextManager[None]:
    """While the block runs, a stop signal is only noted in ``received``."""
    from shinobi.stop_signals import handled

    return handled(lambda signum, _frame: received.append(signum))


def _say_interrupted(handle: Any, received: list[int]) -> NoReturn:
    """Say how many jobs were handed over and how to stop them, and exit as the
    signal says (130, 143 or 129)."""
    handed = [job.job_id for job in handle.jobs if job.job_id]
    with contextlib.suppress(OSError):
        click.echo(
            f"ninja: interrupted while submitting: {len(handed)} of {len(handle.jobs)} jobs were"
            f" handed to {handle.engine} and will run; `ninja cancel {handle.run_id}` stops them",
            err=True,
        )
    sys.exit(128 + (received[0] if received else signal.SIGINT))


def _cancel_what_was_submitted(handle: Any) -> str:
    """Cancel every job of ``handle`` the submitter handed over (``ninja cancel``
    cancelled those on record when it came, and a job submitted since is not),
    and say what was done."""
    from shinobi.errors import ShinobiError
    from shinobi.launch.tracking import tracker_for

    handed = sum(1 for job in handle.jobs if job.job_id)
    try:
        said = tracker_for(handle).cancel(handle)
    except ShinobiError as exc:
        return f"cancelling its {handed} submitted job(s) failed ({exc})"
    return f"it stopped after {handed} of {len(handle.jobs)} job(s); " + "; ".join(said)


def _handle_kept_in(handle: Any, latest: Path) -> str:
    """Where a launch stdout refused to show is on record."""
    return f"the launch is on record in its handle, {latest} (`ninja status {handle.run_id}`)"


def _print_launch(handle: Any, latest: Path, as_json: bool) -> None:
    if as_json:
        data = handle.to_json()
        data["handle"] = str(latest)
        emit(json.dumps(data, indent=2))
        return
    ids = [job.job_id for job in handle.jobs]
    shown = " ".join(str(i) for i in ids[:10]) + (" ..." if len(ids) > 10 else "")
    count = f"{len(ids)} {handle.engine} job(s)"
    emit(f"submitted {handle.recipe} as run {handle.run_id}: {count} ({shown})")
    emit(f"handle: {latest}")
    emit(f"follow it with: ninja status {shlex.quote(str(latest))}")
