"""``ninja status HANDLE``: a detached launch's state, asked fresh of its engine.

HANDLE is a handle.json, the folder holding one, a run id, or a recipe name
(its latest launch here). Each round asks the engine once for every step
(one sacct call on Slurm), so ``--watch`` costs the same for a thousand
jobs as for two. Exit status: 0 while running or once completed, 1 when a
step failed or was cancelled, or the launch was cancelled.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from shinobi.cli.seconds import INTERVAL

if TYPE_CHECKING:
    from shinobi.launch.tracking import LaunchStatus

__all__ = ["command"]


@click.command(short_help="Show the state of a detached launch from its handle.")
@click.argument("handle", metavar="HANDLE")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the state as JSON; with --watch, one document per line each time it changes.",
)
@click.option("--watch", "-w", is_flag=True, help="Keep asking until the launch has finished.")
@click.option(
    "--interval",
    type=INTERVAL,
    help="Seconds between two rounds of --watch (default: the engine's).",
)
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The workspace a run id or recipe name refers to;"
    " default: execution.workdir if configured, else the current directory.",
)
def command(
    handle: str, as_json: bool, watch: bool, interval: float | None, workdir: Path | None
) -> None:
    """Show every step of the launch HANDLE and a summary.

    HANDLE is a handle.json, its folder, a run id (or a unique start of one) or a
    recipe name.
    """
    from shinobi.cli.main import settle_exit_status
    from shinobi.cli.named_config import warn_if_named_file_missing
    from shinobi.launch.find import find_launch, workspace
    from shinobi.launch.handle import note_ended
    from shinobi.launch.left_outputs import with_left_outputs
    from shinobi.launch.render import status_lines
    from shinobi.launch.state import with_noted_end
    from shinobi.launch.tracking import tracker_for
    from shinobi.render.terminal_text import redraws

    warn_if_named_file_missing()  # the engine's settings are read even with --workdir
    launch = find_launch(handle, workspace(workdir))
    tracker = tracker_for(launch)
    pause = interval or tracker.poll_interval()
    redraw = watch and redraws(sys.stdout) and not as_json
    shown = None
    while True:
        status = with_left_outputs(with_noted_end(tracker.status(launch)))
        code = _exit_status(status)
        settle_exit_status(code)  # a reader gone while it prints keeps it
        if as_json and watch:  # JSON Lines: one whole document per line, for a reader
            text = json.dumps(status.to_json(), separators=(",", ":"))
        elif as_json:
            text = json.dumps(status.to_json(), indent=2)
        else:
            text = "\n".join(status_lines(status))
        if redraw:
            click.echo("\033[H\033[2J" + text)
        elif text != shown:
            click.echo(text)
        shown = text
        if not watch or status.final:
            break
        time.sleep(pause)
    if status.final:  # a run starting in its workspace need not ask about it again
        note_ended(launch, status.state)
    if code:
        sys.exit(code)


def _exit_status(status: LaunchStatus) -> int:
    """The exit status ``status`` calls for (see the module's docstring)."""
    if status.noted:  # how it ended is on record: what the engine says now cannot change it
        return 0 if status.noted == "completed" else 1
    # a step that failed (or was cancelled from outside) is news now, not only once
    # the rest of the launch has ended: the launch cannot complete any more
    if status.state in ("failed", "cancelled") or any(s.went_wrong for s in status.steps):
        return 1
    if status.error:  # the scheduler could not be asked: nothing shown is known
        from shinobi.cli.main import ENVIRONMENT_EXIT

        return ENVIRONMENT_EXIT
    return 0
