"""``ninja cancel HANDLE``: stop every job of a detached launch that is still queued or running."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from shinobi.errors import UsageError

if TYPE_CHECKING:
    from shinobi.local_runs import LocalRun

__all__ = ["command"]


@click.command(short_help="Cancel every job of a detached launch.")
@click.argument("handle", metavar="HANDLE")
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The workspace a run id or recipe name refers to;"
    " default: execution.workdir if configured, else the current directory.",
)
def command(handle: str, workdir: Path | None) -> None:
    """Cancel the launch HANDLE (a handle.json, its folder, a run id or a unique start
    of one, or a recipe name)."""
    from shinobi.cli.named_config import warn_if_named_file_missing
    from shinobi.launch.find import LocalRunNamed, find_launch, workspace
    from shinobi.launch.submitter import request_cancel, submitter_running
    from shinobi.launch.tracking import tracker_for

    warn_if_named_file_missing()  # the engine's settings are read even with --workdir
    try:
        launch = find_launch(handle, workspace(workdir))
    except LocalRunNamed as exc:
        raise UsageError(f"{exc}; {_how_to_stop(exc.runs)}") from None
    submitter = submitter_running(launch)
    if launch.state == "submitting":  # a submitter at work stops at its next job
        request_cancel(launch)
    for line in tracker_for(launch).cancel(launch):
        click.echo(f"{launch.name}: {line}")
    if submitter is not None:
        click.echo(
            f"{launch.name}: its submitter (pid {submitter}) was still submitting: it stops once"
            " the job it is handing over is on record, and cancels every job it submitted"
        )


def _how_to_stop(runs: list[LocalRun]) -> str:
    """How to stop a ``ninja run`` that ``ninja cancel`` was given: ``cancel`` stops
    launches only, and a run on a batch backend has jobs that run until stopped."""
    from shinobi.launch.find import stop_hint
    from shinobi.local_runs import jobs_ledgers

    running = [run for run in runs if run.running]
    run = (running or runs)[-1]
    engines = sorted({ledger.parent.name for ledger in jobs_ledgers(run)})
    jobs = "; ".join(f"its {e} jobs: {stop_hint(e, run.run_id)}" for e in engines)
    if running:
        also = f" (and cancels its {', '.join(engines)} jobs)" if engines else ""
        said = f"run {run.run_id} is running: Ctrl-C in the terminal of its `ninja run`"
        if run.stop_hint is not None:  # a run in the background ignores the Ctrl-C
            said += f", or {run.stop_hint},"
        return f"{said} stops it{also}" + (f"; from elsewhere, {jobs}" if jobs else "")
    if jobs:
        return f"run {run.run_id} has ended; if a job of it is left, {jobs}"
    return f"run {run.run_id} has ended: there is nothing to cancel"
