"""``ninja logs NAME [STEP]``: what a detached launch's steps printed; ``--follow`` streams it.

NAME is a run id, a recipe name (its latest launch here), a handle.json or
its folder. ``--follow`` keeps reading until the launch has finished,
asking the engine for the launch's state once per round, and prefixes each
line with the step it came from when several streams are followed.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

__all__ = ["command"]


@click.command(short_help="Show (or --follow) the logs of a detached launch.")
@click.argument("name", metavar="NAME")
@click.argument("step", required=False)
@click.option(
    "--follow", "-f", is_flag=True, help="Keep printing new output until the launch has finished."
)
@click.option(
    "--stream",
    type=click.Choice(["both", "stdout", "stderr"]),
    default="both",
    show_default=True,
    help="Which output of each step.",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.2),
    help="Seconds between two reads with --follow (default: the engine's).",
)
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The workspace NAME refers to; default: the current directory.",
)
def command(
    name: str,
    step: str | None,
    follow: bool,
    stream: str,
    interval: float | None,
    workdir: Path | None,
) -> None:
    """Print the logs of the launch NAME, or of its step STEP."""
    from shinobi.launch.find import find_launch, workspace
    from shinobi.launch.tracking import tracker_for

    launch = find_launch(name, workspace(workdir))
    tracker = tracker_for(launch)
    sources = [s for s in tracker.log_sources(launch, step) if stream in ("both", s.stream)]
    offsets = [0] * len(sources)
    prefix = follow and len(sources) > 1

    def read_all() -> None:
        for i, source in enumerate(sources):
            text, offsets[i] = tracker.read_log(launch, source, offsets[i])
            if not text:
                continue
            if prefix:
                for line in text.splitlines():
                    click.echo(f"[{source.title}] {line}")
            else:
                if len(sources) > 1:
                    click.echo(f"==> {source.title} <==")
                click.echo(text, nl=not text.endswith("\n"))

    if not follow:
        read_all()
        return
    pause = interval or min(tracker.poll_interval(), 2.0)
    while True:
        finished = tracker.status(launch).final
        read_all()
        if finished:
            return
        time.sleep(pause)
