"""``ninja report RUN``: a run manifest as a self-contained HTML page."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import click

__all__ = ["command"]


@click.command(short_help="Write an HTML report of a run made with --provenance.")
@click.argument("run", metavar="RUN")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=True),
    callback=lambda ctx, param, value: _output_file(value),
    help="Where the HTML goes (default: report.html in the run's folder; - for stdout).",
)
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Where .shinobi/runs is looked up for a run id"
    " (default: execution.workdir if configured, else the current directory).",
)
def command(run: str, output: Path | None, workdir: Path | None) -> None:
    """Write an HTML report of RUN: a timeline, the graph and every step's details.

    RUN is a run id (or its unique start) under .shinobi/runs, a run folder,
    or a manifest.json. Runs have a manifest when provenance is on
    (`ninja run --provenance`, or provenance.enabled in the configuration).
    The page needs no network; its log links are relative to where it is
    written (with `-o -`, to the current directory).
    """
    manifest_path, manifest = _load(run, workdir)
    if output is not None and str(output) == "-":
        page = _render(manifest_path, manifest, Path.cwd())
        sys.stdout.flush()  # the page in UTF-8 whatever the locale says
        sys.stdout.buffer.write(page.encode("utf-8"))
        sys.stdout.buffer.flush()
        return
    if output is not None and _is_stream(output):  # a pipe, a terminal, /dev/null
        _write_into(output, _render(manifest_path, manifest, Path.cwd()))
        return
    target = (output or manifest_path.parent / "report.html").resolve()
    _refuse_foreign(target)
    _write(target, _render(manifest_path, manifest, target.parent))
    click.echo(str(target))


def _output_file(value: str | None) -> Path | None:
    """``-o``'s file, refusing what names none: a path ending in ``/`` (a folder) and ``""``.

    ``Path`` drops a trailing slash: ``-o reports/`` wrote an HTML file called
    ``reports`` where the user meant a folder (an existing folder is click's refusal
    already), and ``-o ""`` (an unset shell variable) was the current directory.
    """
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("an empty path names no file; name the report's file")
    if value.endswith(("/", os.sep)):
        raise click.BadParameter(
            f"{value} names a folder, and there is none there; create it and name a file"
            f" in it (-o {value}report.html), or name a file"
        )
    return Path(value)


def _load(run: str, workdir: Path | None) -> tuple[Path, dict[str, Any]]:
    """The manifest RUN names, and what it holds; a one-line error when there is none."""
    from shinobi.cli.named_config import configured_workspace
    from shinobi.errors import UsageError
    from shinobi.provenance import load_manifest, resolve_manifest

    try:  # the configured execution.workdir, as ninja runs and ninja logs take it
        manifest_path = resolve_manifest(run, configured_workspace(workdir)).resolve()
        return manifest_path, load_manifest(manifest_path)
    except (FileNotFoundError, ValueError) as exc:
        launch = _launch_named(run, workdir)
        if launch is not None:  # the --provenance hint would not apply to it
            named = shlex.quote(run)  # a folder's path may hold a space
            raise UsageError(
                f"{run!r} is the launch {launch}, compiled for a cluster: reports are of"
                f" local runs; `ninja status {named}` and `ninja logs {named}` show what it did"
            ) from None
        raise UsageError(str(exc)) from None


def _launch_named(name: str, workdir: Path | None) -> str | None:
    """``recipe/run-id`` of the compiled launch ``name`` designates here, if any:
    by its id or recipe, or by its folder or handle.json (the path ``ninja compile
    --submit`` prints), which got the --provenance hint that cannot apply to it."""
    from shinobi.cli.named_config import configured_workspace
    from shinobi.launch.find import workspace_launches

    at = _launch_at(Path(name).expanduser())
    if at is not None:
        return at
    launches, _ = workspace_launches(configured_workspace(workdir))
    for handle in launches:
        if name in (handle.run_id, handle.name, handle.recipe):
            return f"{handle.recipe}/{handle.run_id}"
    return None


def _launch_at(path: Path) -> str | None:
    """``recipe/run-id`` of the launch whose folder or handle file ``path`` is."""
    from shinobi.errors import UsageError
    from shinobi.launch.handle import HANDLE_NAME, read_handle

    handle_file = path / HANDLE_NAME if path.is_dir() else path
    if not handle_file.is_file():
        return None
    try:
        handle = read_handle(handle_file)
    except UsageError:  # not a handle: the manifest's own error says what it is
        return None
    return f"{handle.recipe}/{handle.run_id}"


def _render(manifest_path: Path, manifest: dict[str, Any], page_dir: Path) -> str:
    """The page, with links from ``page_dir``; a damaged manifest is a one-line error."""
    from shinobi.errors import UsageError
    from shinobi.render.report_html import render_report
    from shinobi.render.run_folder import read_folder

    log_base = os.path.relpath(manifest_path.parent, page_dir)
    try:
        disk = read_folder(manifest_path, manifest, page_dir)
        return render_report(manifest, "" if log_base == "." else log_base, disk)
    except (TypeError, KeyError, AttributeError, ValueError, OverflowError) as exc:
        raise UsageError(
            f"{manifest_path}: not a readable run manifest ({type(exc).__name__}: {exc})"
        ) from None


def _is_stream(output: Path) -> bool:
    """Whether ``output`` is something other than a file or directory: a FIFO, a
    device (``/dev/stdout``, ``/dev/null``) or a socket. The page is written into
    it; replacing it with a file (what writing a file whole does) would remove a
    named pipe someone reads, or the machine's own ``/dev/null``."""
    import stat

    try:
        mode = os.stat(output).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_into(output: Path, page: str) -> None:
    try:
        with open(output, "wb") as stream:
            stream.write(page.encode("utf-8"))
    except OSError as exc:
        raise _unwritable(output, exc) from None


def _unwritable(target: Path, exc: OSError) -> Exception:
    """The one-line error for a report that could not be written at ``target``."""
    from shinobi.errors import MachineRefused

    return MachineRefused(
        f"cannot write the report to {target}: {exc.strerror or exc}; write it elsewhere"
        " with -o PATH, or to standard output with -o -"
    )


def _refuse_foreign(target: Path) -> None:
    """A one-line error when ``target`` is a file ninja did not write as a report:
    ``-o`` pointing at a user's script or notes must not replace it."""
    from shinobi.errors import UsageError
    from shinobi.render.report_html import GENERATOR

    try:
        with open(target, "rb") as page:
            start = page.read(4096)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return  # nothing there (a directory is the writer's own error)
    except OSError:
        return  # unreadable: writing will say why
    if GENERATOR.encode() in start or b"<title>shinobi run " in start:
        return  # a report ninja wrote before (older ones carry the title only)
    raise UsageError(
        f"{target} is there already and is not a report ninja wrote; remove it first, or"
        " write the report elsewhere with -o PATH (or to standard output with -o -)"
    )


def _write(target: Path, page: str) -> None:
    """Write the page at ``target``, in UTF-8 whatever the locale, whole or not at all
    (a full disk left an empty page behind)."""
    from shinobi.errors import UsageError
    from shinobi.launch.handle import atomic_write

    if not target.parent.is_dir():  # a typo must not create directories anywhere
        what = "is not a directory" if target.parent.exists() else "does not exist"
        raise UsageError(f"cannot write the report to {target}: {target.parent} {what}")
    folder = _run_folder_times(target.parent)
    try:
        atomic_write(target, page)  # made as the umask says: a report is made to be read
    except OSError as exc:
        raise _unwritable(target, exc) from None
    if folder is not None:  # a run's last activity is its own, not the report's
        with contextlib.suppress(OSError):
            os.utime(target.parent, ns=folder)


def _run_folder_times(folder: Path) -> tuple[int, int] | None:
    """The access and modification times of ``folder`` when it is a run's folder:
    `ninja runs` and `clean --runs` read its last activity from its time, which
    a report written into it moved (an old run then looked new)."""
    from shinobi.local_runs import RUN_RECORD

    if not ((folder / RUN_RECORD).exists() or (folder / "manifest.json").exists()):
        return None
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return st.st_atime_ns, st.st_mtime_ns
