"""``ninja report RUN``: a run manifest as a self-contained HTML page."""

from __future__ import annotations

import os
from pathlib import Path

import click

__all__ = ["command"]


@click.command(short_help="Write a self-contained HTML report of a run.")
@click.argument("run", metavar="RUN")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where the HTML goes (default: report.html in the run's folder).",
)
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Where .shinobi/runs is looked up for a run id (default: the current directory).",
)
def command(run: str, output: Path | None, workdir: Path | None) -> None:
    """Write an HTML report of RUN: a timeline, the graph and every step's details.

    RUN is a run id (or its unique start) under .shinobi/runs, a run folder,
    or a manifest.json. Runs have a manifest when provenance is on
    (`ninja run --provenance`, or provenance.enabled in the configuration).
    The page needs no network; its log links are relative to the run folder.
    """
    from shinobi.errors import UsageError
    from shinobi.provenance import load_manifest, resolve_manifest
    from shinobi.render.report_html import render_report

    try:
        manifest_path = resolve_manifest(run, workdir).resolve()
        manifest = load_manifest(manifest_path)
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    target = (output or manifest_path.parent / "report.html").resolve()
    log_base = os.path.relpath(manifest_path.parent, target.parent)
    try:
        page = render_report(manifest, "" if log_base == "." else log_base)
    except (TypeError, KeyError, AttributeError, ValueError) as exc:  # a damaged manifest
        raise UsageError(
            f"{manifest_path}: not a readable run manifest ({type(exc).__name__}: {exc})"
        ) from None
    if not target.parent.is_dir():  # a typo must not create directories anywhere
        raise UsageError(f"cannot write the report to {target}: {target.parent} does not exist")
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {target}: {exc.strerror}") from None
    click.echo(str(target))
