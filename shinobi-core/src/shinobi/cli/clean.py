"""``ninja clean --launches``: remove finished launches' handles, scripts and job logs.

Opt-in, because a handle is ``ninja status``'s only local record of a
detached launch and deleting it stops nothing. A launch that is still
running (or whose engine cannot be asked) is therefore kept unless
``--force``, and the command says which and why.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

__all__ = ["command"]


@click.command(short_help="Remove runtime artifacts: finished launches' handles and logs.")
@click.option(
    "--launches",
    is_flag=True,
    help="Remove the handles, scripts and job logs of finished detached launches.",
)
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The workspace to clean; default: the current directory.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Also remove launches still running (their jobs go on; only the record goes).",
)
def command(launches: bool, workdir: Path | None, force: bool) -> None:
    """Remove what finished detached launches left under WORKDIR/.shinobi/."""
    from shinobi.errors import UsageError
    from shinobi.launch.cleanup import remove_launch
    from shinobi.launch.find import workspace, workspace_launches
    from shinobi.launch.index import forget_launches, list_launches
    from shinobi.launch.state import statuses

    if not launches:
        raise UsageError(
            "say what to clean: --launches (handles, scripts and logs of finished launches)"
        )
    root = workspace(workdir)
    handles, _ = workspace_launches(root)
    stale = [e.handle for e in list_launches(root) if not Path(e.handle).exists()]
    forgotten = forget_launches(stale) if stale else 0
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
        files = remove_launch(launch)
        click.echo(f"removed {launch.name} ({status.state}): {files} file(s)")
    if not handles and not forgotten:
        click.echo(f"no launches to clean in {root}")
    elif forgotten:
        click.echo(f"forgot {forgotten} launch(es) whose handle was already gone")
    if kept:
        sys.exit(1)
