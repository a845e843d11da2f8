"""``ninja runs``: every detached launch of this workspace, its state rebuilt from its engine.

Launches are grouped by the plugin that answers for them and each group is
asked at once (one sacct call for all Slurm launches), so a long history
does not mean a long wait.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

__all__ = ["command"]


@click.command(short_help="List the detached launches of this workspace.")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The workspace to list; default: the current directory.",
)
@click.option(
    "--all",
    "everywhere",
    is_flag=True,
    help="Every launch this user recorded, whatever its workspace.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the launches as JSON.")
def command(workdir: Path | None, everywhere: bool, as_json: bool) -> None:
    """List every launch made from this workspace, with its state now."""
    from shinobi.launch.find import workspace, workspace_launches
    from shinobi.launch.render import runs_table
    from shinobi.launch.state import statuses

    root = workspace(workdir)
    if everywhere:
        from shinobi.launch.find import all_launches

        launches, notes = all_launches()
    else:
        launches, notes = workspace_launches(root)
    found = statuses(launches)
    if as_json:
        click.echo(
            json.dumps(
                {"workspace": str(root), "launches": [s.to_json() for s in found], "notes": notes},
                indent=2,
            )
        )
        return
    for note in notes:
        click.echo(f"ninja: note: {note}", err=True)
    if not found:
        where = "recorded" if everywhere else f"made from {root}"
        click.echo(f"no detached launches {where} (ninja compile --submit makes one)")
        return
    click.echo("\n".join(runs_table(found)))
