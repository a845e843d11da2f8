"""``ninja clean``: remove finished launches (``--launches``) and run folders (``--runs``).

Opt-in, because a handle is ``ninja status``'s only local record of a
detached launch and deleting it stops nothing. A launch that is still
running (or whose engine cannot be asked) is therefore kept unless
``--force``, and the command says which and why. A run folder (the logs
and manifest ``ninja run`` keeps) is never removed while its run goes on.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from shinobi.left_jobs import LeftJobs
    from shinobi.local_runs import LocalRun

__all__ = ["command"]


@click.command(short_help="Remove finished launches' handles and logs, and old run folders.")
@click.option(
    "--launches",
    is_flag=True,
    help="Remove the handles, scripts and job logs of finished detached launches.",
)
@click.option(
    "--runs",
    is_flag=True,
    help="Remove the folders of finished local runs (.shinobi/runs: logs, manifests). A run"
    " that ended abruptly (its ninja killed) within the last hour, or whose batch jobs (ninja"
    " run --backend slurm) still run or cannot be asked about, is kept unless --older-than"
    " says otherwise: steps it started may still be running and writing there.",
)
@click.option(
    "--older-than",
    "older_than",
    metavar="AGE",
    help="With --runs: only folders untouched for longer than AGE: 30d, 12h, 2w (a bare"
    " number is days; default: every finished run).",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The workspace to clean; default: execution.workdir if configured, else the"
    " current directory. With --launches it may be a workspace that was deleted: its"
    " launches are forgotten.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Also remove launches still running (their jobs go on; only the record goes).",
)
def command(
    launches: bool, runs: bool, older_than: str | None, workdir: Path | None, force: bool
) -> None:
    """Remove what finished launches and runs left under WORKDIR/.shinobi/."""
    from shinobi.cli.named_config import configured_workspace
    from shinobi.errors import UsageError

    if not (launches or runs):
        raise UsageError(
            "say what to clean: --launches (handles, scripts and logs of finished launches)"
            " and/or --runs (the log and manifest folders of finished local runs)"
        )
    if older_than is not None and not runs:
        raise UsageError("--older-than applies to run folders: add --runs")
    if force and not launches:  # run folders still in use are never removed, forced or not
        raise UsageError("--force applies to launches still running: add --launches")
    from shinobi.cli.ages import parse_age

    days = parse_age(older_than) / 86400 if older_than is not None else 0.0
    root = configured_workspace(workdir)
    if not root.exists() and (runs or not launches):
        # --launches alone may name a deleted workspace: its index entries are all that is left
        raise UsageError(f"--workdir {workdir}: no such folder; name the workspace to clean")
    if runs:
        _clean_runs(root, days, older_than)
    if launches and _clean_launches(root, force):
        sys.exit(1)


#: How long a run that ended abruptly stays, unless ``--older-than`` says otherwise:
#: its ninja was killed, not its steps (a Slurm job, a tool left orphaned), which
#: may still write their logs, or an sbatch script, into its folder.
_SETTLING_DAYS = 1 / 24


def _unsettled() -> dict[str, str]:
    """Run states whose steps may still be running elsewhere, and why."""
    from shinobi.local_runs import ENDED_ABRUPTLY
    from shinobi.teardown import INTERRUPTED_LEAVING

    return {
        ENDED_ABRUPTLY: "it ended abruptly (its ninja was killed)",
        INTERRUPTED_LEAVING: "its interrupt left something running (a process that would"
        " not die, or a Slurm job whose cancellation was never confirmed)",
    }


def _clean_runs(root: Path, older_than: float, as_given: str | None = None) -> None:
    """Remove finished run folders untouched for ``older_than`` days (``as_given``
    on the command line, which the summary repeats); a running one stays, and so
    does one that ended abruptly within the last hour unless ``as_given`` says."""
    from shinobi.local_runs import RUN_RECORD, age_days, local_runs, remove_run

    removed = size = young = failed = 0
    unsettled = _unsettled()
    runs = local_runs(root)
    asked = _asked_jobs(runs, unsettled) if as_given is None else {}
    for run in runs:
        if run.unreadable:  # a colleague's, made under umask 077: theirs to remove
            click.echo(
                f"ninja: kept {run.path}: this user cannot read it (permission denied);"
                " its owner can remove it, or make it readable",
                err=True,
            )
        elif not run.recorded:
            # nothing says ninja made it: a user's own folder is never ninja's to remove
            damaged = (run.path / "manifest.json").exists()  # there, but not readable
            if (run.path / RUN_RECORD).exists():  # a record a full disk left empty, say
                manifest = "so is its manifest" if damaged else "it has no manifest"
                why = f"its record {RUN_RECORD} is empty or damaged, and {manifest}"
            elif damaged:
                why = "it has no lock file, and its manifest.json is damaged: nothing says"
                why += " ninja made it"
            else:
                why = "it is not a run folder (no lock file, no manifest)"
            click.echo(
                f"ninja: kept {run.path}: {why}; remove it yourself if it is yours to remove",
                err=True,
            )
        elif run.running:
            click.echo(f"ninja: kept run {run.run_id}: it is still running", err=True)
        elif (left := asked.get(run.path)) and not all(jobs.ended for jobs in left):
            click.echo(_kept_for_jobs(run.run_id, unsettled[run.state], left), err=True)
        elif as_given is None and run.state in unsettled and age_days(run) < _SETTLING_DAYS:
            why = unsettled[run.state]
            click.echo(
                f"ninja: kept run {run.run_id}: {why} and was written to in the last hour, so"
                " steps it started may still be running and writing their logs there; `ninja"
                " clean --runs --older-than 1h` removes it once they are quiet",
                err=True,
            )
        elif age_days(run) > older_than:
            linked = run.path.is_symlink()
            try:
                size += remove_run(run)
            except OSError as exc:
                how = "not removed" if getattr(exc, "untouched", False) else "only partly removed"
                click.echo(f"ninja: run {run.run_id} is {how}: {exc}", err=True)
                failed += 1
                continue
            removed += 1
            if linked:
                click.echo(
                    f"ninja: {run.path} was a link: removed it, and left the folder it pointed"
                    " to alone",
                    err=True,
                )
        else:
            young += 1
    said = f"removed {removed} run folder(s) ({size / 1e6:.1f} MB)"
    if young:
        shown = as_given.strip() if as_given else ""
        if not shown or shown[-1].isdigit():  # a bare number is days
            shown = f"{older_than:g} day(s)"
        said += f"; kept {young} touched in the last {shown}"
    click.echo(said)
    if failed:
        sys.exit(1)


def _asked_jobs(runs: list[LocalRun], unsettled: dict[str, str]) -> dict[Path, list[LeftJobs]]:
    """What the backends say of the batch jobs each run that ended unsettled listed
    (one question per backend for all of them), by run folder: a job may run for
    days without a word, so its run's folder stays while one is alive."""
    from shinobi.left_jobs import left_jobs

    found: dict[Path, list[LeftJobs]] = {}
    for jobs in left_jobs([run.path for run in runs if run.state in unsettled]):
        found.setdefault(jobs.run_dir, []).append(jobs)
    return found


def _kept_for_jobs(run_id: str, why: str, left: list[LeftJobs]) -> str:
    """Why a run whose batch jobs may still run is kept, and what removes it."""
    alive = [jobs for jobs in left if jobs.alive]
    kinds = " and ".join(dict.fromkeys(jobs.kind for jobs in left))
    if alive:
        said = "; ".join(f"{jobs.named} (listed in {jobs.ledger} there)" for jobs in alive)
        stops = "; ".join(jobs.how_to_stop for jobs in alive)
        return (
            f"ninja: kept run {run_id}: {why} after starting {kinds}, and {said} still"
            f" run ({alive[0].alive_as}), writing there; stop them ({stops}) or wait for them"
            " to end, then clean again"
        )
    unknown = [jobs for jobs in left if jobs.unknown is not None]
    listed = " and ".join(str(jobs.ledger) for jobs in unknown)
    asked = "; ".join(f"{jobs.engine}: {jobs.unknown}" for jobs in unknown)
    return (
        f"ninja: kept run {run_id}: {why} after starting {kinds}, listed in {listed}"
        f" there, which may still be queued or running and writing there (they could not be"
        f" asked about: {asked}); once none is (cancel those that are), `ninja clean --runs"
        " --older-than 1h` removes it"
    )


def _clean_launches(root: Path, force: bool) -> int:
    """Remove finished launches; returns how many were kept because they run on."""
    from shinobi.errors import UsageError
    from shinobi.launch.cleanup import remove_damaged_handle, remove_launch
    from shinobi.launch.find import damaged_handles, stop_hint, workspace_launches
    from shinobi.launch.handle import ForeignHandle
    from shinobi.launch.index import forget_launches, list_launches
    from shinobi.launch.state import statuses

    handles, _ = workspace_launches(root)
    gone = [e for e in list_launches(root) if not Path(e.handle).exists()]
    forgotten = forget_launches([e.handle for e in gone]) if gone else 0
    kept = 0
    for status in statuses(handles):
        launch = status.handle
        if not status.final and not force:
            kept += 1
            why = status.error or status.summary()
            click.echo(
                f"ninja: kept {launch.name}: it is {status.state} ({why}); deleting its handle"
                " would lose ninja status's only record of it while its jobs go on. Wait for it,"
                f" `ninja cancel {launch.run_id}`, or pass --force",
                err=True,
            )
            continue
        try:
            files = remove_launch(launch, record_only=not status.final, workspace=root)
        except UsageError as outside:
            kept += 1
            click.echo(f"ninja: error: {outside}", err=True)
            continue
        if status.final:
            click.echo(f"removed {launch.name} ({status.state}): {files} file(s)")
            continue
        # forced: its jobs are not stopped, only its record goes; they still
        # write their logs into its folder
        click.echo(f"removed the record of {launch.name} ({status.state})")
        click.echo(
            f"ninja: {launch.name} was {status.state}: its jobs go on, and nothing of"
            f" ninja's follows them now; {stop_hint(launch.engine, launch.run_id)}. Its"
            f" folder {launch.run_dir} is kept (its jobs write their logs there): delete it"
            " once they have ended",
            err=True,
        )
    damaged = damaged_handles(root)
    for exc in damaged:
        if isinstance(exc, ForeignHandle):  # another user's launch: never this user's to remove
            kept += 1
            click.echo(f"ninja: kept {exc.path}: {exc}", err=True)
            continue
        if not force:
            kept += 1
            click.echo(
                f"ninja: kept the damaged launch handle {exc.path} ({exc.detail}): its jobs, if"
                " any run, cannot be told; pass --force to remove it",
                err=True,
            )
            continue
        try:
            removed = remove_damaged_handle(exc.path, root)
        except UsageError as refused:
            kept += 1
            click.echo(f"ninja: error: {refused}", err=True)
            continue
        click.echo(f"removed the damaged launch handle {exc.path}: {removed}")
    if not handles and not forgotten and not damaged:
        click.echo(f"no launches to clean in {root}")
    elif forgotten:
        click.echo(
            f"forgot {forgotten} launch(es) whose handle was already gone; any of their"
            " jobs still running were not stopped:"
        )
        for entry in gone:
            click.echo(f"  {entry.recipe}/{entry.run_id}: {stop_hint(entry.engine, entry.run_id)}")
    return kept
