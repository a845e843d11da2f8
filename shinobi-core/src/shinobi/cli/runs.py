"""``ninja runs``: the runs of this workspace: detached launches, their state rebuilt
from their engine, and the folders local ``ninja run`` runs left.

Launches are grouped by the plugin that answers for them and each group is
asked at once (one sacct call for all Slurm launches), so a long history
does not mean a long wait.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from shinobi.launch.tracking import LaunchStatus

__all__ = ["command"]


@click.command(short_help="List the runs and detached launches of this workspace.")
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The workspace to list;"
    " default: execution.workdir if configured, else the current directory.",
)
@click.option(
    "--all",
    "everywhere",
    is_flag=True,
    help="Every launch this user recorded, whatever its workspace.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the launches as JSON.")
def command(workdir: Path | None, everywhere: bool, as_json: bool) -> None:
    """List every launch made from this workspace, with its state now, and the
    folders of its local runs (their logs: `ninja logs RUN`).

    A local run's state is running, or how it ended: ok, failed, cancelled,
    interrupted, crashed, "interrupted, not all stopped" when a process would
    not die or a cluster job's cancellation was never confirmed, or "ended
    abruptly (killed?)" when its ninja was killed before it could say (its
    steps may still be running)."""
    from shinobi.cli.named_config import configured_workspace
    from shinobi.launch.find import workspace_launches
    from shinobi.launch.render import local_runs_table, runs_table
    from shinobi.launch.state import statuses
    from shinobi.local_runs import local_runs

    root = configured_workspace(workdir)
    if everywhere:
        from shinobi.launch.find import all_launches

        launches, notes = all_launches()
    else:
        launches, notes = workspace_launches(root)
    found = statuses(launches)
    local = [] if everywhere else local_runs(root)
    if as_json:
        data = {
            "workspace": str(root),
            "launches": [s.to_json() for s in found],
            "runs": [r.to_json() for r in local],
            "notes": notes,
        }
        click.echo(json.dumps(data, indent=2))
        _exit_if_unasked(found)
        return
    for note in notes:
        click.echo(f"ninja: note: {note}", err=True)
    if local:
        click.echo(f"local runs (ninja run), in {root / '.shinobi' / 'runs'}:")
        click.echo("\n".join(local_runs_table(local)))
        click.echo("")
    elif not everywhere and not found:  # nothing at all: say so of both kinds
        if root.name == ".shinobi" and (root / "runs").is_dir():  # --workdir .shinobi
            click.echo(
                f"no local runs in {root}: --workdir names the directory that holds"
                f" .shinobi, here {root.parent}"
            )
        else:
            click.echo(
                f"no local runs in {root} (each ninja run keeps its logs in"
                f" {root / '.shinobi' / 'runs'})"
            )
    if not found:
        where = "recorded" if everywhere else f"made from {root}"
        click.echo(f"no detached launches {where} (ninja compile --submit makes one)")
        return
    click.echo("detached launches:")
    click.echo("\n".join(runs_table(found)))
    _exit_if_unasked(found)


def _exit_if_unasked(found: list[LaunchStatus]) -> None:
    """Exit 74 when an engine could not be asked about a launch: the states listed
    are then not known, which a script reading the list must be able to tell
    (``ninja status`` says so the same way). A damaged handle, or one whose plugin
    is not installed here, is a note that stays: not this; nor a launch on record
    as ended, whose state is known without the engine."""
    unasked = [s for s in found if s.error and not s.damaged and not s.noted]
    if unasked:
        from shinobi.cli.main import ENVIRONMENT_EXIT
        from shinobi.wording import counted

        click.echo(
            f"ninja: {counted(len(unasked), 'launch', 'launches')} not asked: {unasked[0].error}",
            err=True,
        )
        sys.exit(ENVIRONMENT_EXIT)
