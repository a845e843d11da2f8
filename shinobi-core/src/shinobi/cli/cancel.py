"""``ninja cancel HANDLE``: stop every job of a detached launch that is still queued or running."""

from __future__ import annotations

from pathlib import Path

import click

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
    from shinobi.launch.find import find_launch, workspace
    from shinobi.launch.tracking import tracker_for

    launch = find_launch(handle, workspace(workdir))
    for line in tracker_for(launch).cancel(launch):
        click.echo(f"{launch.name}: {line}")
