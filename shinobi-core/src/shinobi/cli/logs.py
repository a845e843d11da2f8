"""``ninja logs NAME [STEP]``: what a run's or a launch's steps printed; ``--follow`` streams it.

NAME is the id of a local run (a folder of ``.shinobi/runs``, or a unique
start of one), or a detached launch: its run id, its recipe name (the latest
launch here), a handle.json or its folder. ``--follow`` keeps reading until the launch has finished,
asking the engine for the launch's state once per round, and prefixes each
line with the step it came from when several streams are followed.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from pathlib import Path
from typing import Any

import click

from shinobi.cli.log_copy import HeldLine, echo_logs
from shinobi.cli.seconds import INTERVAL
from shinobi.wording import listed

__all__ = ["command"]


@click.command(short_help="Show (or --follow) the logs of a run or a detached launch.")
@click.argument("name", metavar="NAME")
@click.argument("step", required=False)
@click.option(
    "--follow",
    "-f",
    is_flag=True,
    help="Keep printing new output until the run or launch has finished.",
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
    type=INTERVAL,
    help="Seconds between two rounds of --follow, each asking the engine whether the"
    " launch has finished (default: read every 2 s, ask at the engine's interval).",
)
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The workspace NAME refers to;"
    " default: execution.workdir if configured, else the current directory.",
)
def command(
    name: str,
    step: str | None,
    follow: bool,
    stream: str,
    interval: float | None,
    workdir: Path | None,
) -> None:
    """Print the logs of the run or launch NAME, or of its step STEP.

    NAME is a local run's id (or any unique start of it) or a launch: its
    handle.json, its folder, its run id (or a unique start of it) or its recipe's name.
    """
    from shinobi.cli.named_config import configured_workspace
    from shinobi.errors import UsageError
    from shinobi.launch.find import find_launch
    from shinobi.launch.tracking import tracker_for
    from shinobi.local_runs import find_local_run, is_run_name

    if not name.strip():  # `ninja logs "$UNSET"`: no run is named so
        raise UsageError(
            "the run's name is empty (an unset shell variable?); give a run id, a launch or a"
            " recipe name (`ninja runs` lists them)"
        )
    root = configured_workspace(workdir)
    run = find_local_run(root, name)
    if run is not None and run.run_id != name:  # by the start of its id: one of a launch too?
        _refuse_a_shared_start(name, run.run_id, root)
    if run is None:
        try:
            launch = find_launch(name, root)
        except UsageError as exc:
            if not is_run_name(name):  # `.`, `..`, a path: never a run's id
                raise UsageError(
                    f"{exc}; {name!r} is not a run id either (`ninja runs` lists them)"
                ) from None
            # not a launch: perhaps the recipe of a local run (its latest)
            run = find_local_run(root, name, by_recipe=True)
            if run is None:
                raise UsageError(f"{exc}; {_local_runs_here(root)}") from None
    if run is not None:
        _local_logs(root, run, step, stream, follow, interval or 1.0)
        return
    from shinobi.launch.tracking import LaunchTracker

    tracker = tracker_for(launch)
    sources = [s for s in tracker.log_sources(launch, step) if stream in ("both", s.stream)]
    offsets = [0] * len(sources)
    prefix = follow and len(sources) > 1
    # logs in files on this host (the default reader) are printed byte for byte, as a
    # local run's are; a launcher that reads them from elsewhere gives text
    on_this_host = type(tracker).read_log is LaunchTracker.read_log
    at: dict[Path, int] = {}
    partial: dict[Path, bytes] = {}
    held = HeldLine()

    shown = False

    def read_all(final: bool = True) -> None:
        nonlocal shown
        if on_this_host:
            found = [(s.title, Path(s.location)) for s in sources if os.path.exists(s.location)]
            echo_logs(found, at, prefix, partial, final, held)
            shown = shown or any(at.values())
            return
        for i, source in enumerate(sources):
            text, offsets[i] = tracker.read_log(launch, source, offsets[i])
            if not text:
                continue
            shown = True
            if prefix:
                for line in text.splitlines():
                    click.echo(f"[{source.title}] {line}")
            else:
                if len(sources) > 1:
                    click.echo(f"==> {source.title} <==")
                click.echo(text, nl=not text.endswith("\n"))

    def said_nothing() -> UsageError:  # as a local run says it, rather than printing nothing
        what = f"step {step!r} of launch {name}" if step else f"launch {name}"
        never = _never_ran(tracker, launch, step)
        if never is not None:  # "no log yet" sent the user off to wait for it
            return UsageError(f"{what} did not run ({never}), so it printed nothing")
        return UsageError(
            f"{what} has no log yet, or left none (a job that has not started, or that"
            " printed nothing, has none); `ninja status` shows where each job is"
        )

    if not follow:
        read_all()
        if not shown:
            raise said_nothing()
        return
    # The logs are files here, cheap to read often; whether the launch has
    # finished is a call to the scheduler every user of the cluster shares.
    pause = interval or min(tracker.poll_interval(), 2.0)
    ask_every = interval or max(pause, tracker.poll_interval())
    next_ask = 0.0
    finished = False
    while True:
        if time.monotonic() >= next_ask:
            finished = tracker.status(launch).final
            next_ask = time.monotonic() + ask_every
        read_all(final=finished)
        if finished:
            if not shown:  # followed to its end in silence: say so, as without --follow
                raise said_nothing()
            return
        time.sleep(pause)


def _streams(run: Any, step: str | None, stream: str) -> list[tuple[str, Path]]:
    """The logs of ``run`` (or of its ``step``) for ``stream`` (``both``, ``stdout``...)."""
    from shinobi.local_runs import run_logs

    kinds = {"both": ("stdout", "stderr"), "stdout": ("stdout",), "stderr": ("stderr",)}
    logs = run_logs(run, step)
    if step is not None and "." in step:  # in a scattered nested recipe: each slice's too
        mine = {path for _, path in logs}
        logs = [
            (t, p)
            for t, p in run_logs(run, None)
            if p in mine or _in_slices(step, t.rsplit(" ", 1)[0])
        ]
    return [(t, p) for t, p in logs if t.rsplit(" ", 1)[1] in kinds[stream]]


def _in_slices(step: str, name: str) -> bool:
    """Whether the step ``name`` is ``step`` (or inside it) in a slice of a scattered
    recipe it is nested in: ``ns.first`` holds ``ns[0].first`` and ``ns[1].first``,
    as a scattered step's name holds its slices (``hello``: ``hello[0]``...)."""
    sliced = r"(?:\[\d+\])*"
    pattern = (sliced + r"\.").join(re.escape(part) for part in step.split("."))
    return re.fullmatch(rf"{pattern}{sliced}(?:\..*)?", name, re.DOTALL) is not None


def _refuse_a_shared_start(name: str, run_id: str, root: Path) -> None:
    """``name`` starts the id of a local run: refused if it starts a launch's too, as
    a start that several runs share is (``ninja status`` would take the launch)."""
    from shinobi.errors import UsageError
    from shinobi.launch.find import launch_ids_starting
    from shinobi.wording import counted

    launches = launch_ids_starting(name, root)
    if launches:
        shown = ", ".join(launches[:5]) + (" and more" if len(launches) > 5 else "")
        many = counted(len(launches), "launch", "launches")
        raise UsageError(
            f"{name!r} starts the id of the run {run_id} and of {many} ({shown}); give more of it"
        )


def _local_logs(
    root: Path, run: Any, step: str | None, stream: str, follow: bool, pause: float
) -> None:
    """The logs a local run kept; with ``follow``, until the run has ended."""
    from shinobi.local_runs import is_running

    if follow:  # a misspelt step is said at once, not once the run has ended hours later
        _refuse_unknown_step(run, step)
    if not _streams(run, step, stream) and not (follow and run.running):
        _nothing_printed(root, run, step, stream)
        return
    if step is not None and not follow:
        _note_cached_slices(run, step)
    offsets: dict[Path, int] = {}
    # followed, the lines of several logs interleave as they come: each says whose
    # it is, from the first (the other logs may not be there yet)
    several = step is None or stream == "both" or len(_streams(run, step, stream)) > 1
    partial: dict[Path, bytes] = {}
    held = HeldLine()
    waited = False  # on tools a ninja killed outright (kill -9) left writing these logs
    while True:
        # read once more after it ended, and after the tools it left have ended too
        ended = not follow or not is_running(run.path)
        if ended and follow and _left(run):
            ended, waited = False, True
        found = _streams(run, step, stream)
        prefix = follow and (several or len(found) > 1)
        echo_logs(found, offsets, prefix, partial, ended, held)
        if ended:
            break
        time.sleep(pause)
    if follow and _abrupt(run):
        after = " The tools it left running have ended too." if waited else ""
        click.echo(
            f"ninja: note: run {run.run_id} ended abruptly (its ninja was killed?), so its"
            f" steps' logs may stop short.{after}",
            err=True,
        )
    if not any(offsets.values()):  # its logs hold nothing (a write the disk refused), or
        _nothing_printed(root, run, step, stream)  # it was followed to its end in silence
    for path, error in _cut(run, step, stream).items():
        click.echo(
            f"ninja: note: the log {path} was cut off by a write error ({error}): what the"
            " step printed after that is missing",
            err=True,
        )


def _left(run: Any) -> list[int]:
    """The tools ``run``'s ninja left running when it went away without ending them."""
    from shinobi.live_runs import left_tools

    return left_tools(run.path.parent, run.run_id)


def _abrupt(run: Any) -> bool:
    """Whether ``run`` ended without its ninja saying how (killed outright)."""
    from shinobi.local_runs import ENDED_ABRUPTLY, describe_run

    return describe_run(run.path).state == ENDED_ABRUPTLY


def _never_ran(tracker: Any, launch: Any, step: str | None) -> str | None:
    """Why ``step`` of ``launch`` never ran, as its engine says (``never ran: boom did
    not succeed``); None when it may still run, or the engine cannot be asked."""
    from shinobi.errors import ShinobiError

    if step is None:
        return None
    try:
        found = {s.step: s for s in tracker.status(launch).steps}.get(step)
    except ShinobiError:
        return None
    if found is None or found.started is not None or found.phase not in ("cancelled", "skipped"):
        return None
    return str(found.detail or found.phase)


def _cut(run: Any, step: str | None, stream: str) -> dict[Path, str]:
    """The logs of ``run`` (or ``step``) for ``stream`` that a write error cut off, and
    the error, as the run recorded them."""
    from shinobi.local_runs import cut_logs

    suffixes = {"both": (".out", ".err"), "stdout": (".out",), "stderr": (".err",)}[stream]
    return {p: e for p, e in cut_logs(run, step).items() if p.suffix in suffixes}


def _refuse_lost(run: Any, step: str | None, stream: str, what: str) -> None:
    """Say so when the logs asked for hold nothing because writing them failed: the
    step printed, but nothing of it was kept (a full disk, say); or because the
    run's logs folder was removed (the step was said to have printed nothing).

    Only the run's record of a failed write says so. An empty log does not: Slurm
    makes a job's logs empty as it starts (``--backend slurm``), so a quiet step
    leaves one there, where a native step leaves none.
    """
    from shinobi.errors import UsageError

    folder = run.path / "logs"
    if not folder.is_dir():  # every run makes it as it starts: this one was removed
        raise UsageError(
            f"{what} has no logs here: the run's logs folder {folder} was removed, and what"
            " its steps printed with it"
        )
    lost = _cut(run, step, stream)
    if lost:
        path, error = next(iter(lost.items()))
        more = f" and {len(lost) - 1} more" if len(lost) > 1 else ""
        raise UsageError(
            f"{what} kept no logs: writing its log {path}{more} failed ({error}), so"
            " nothing of what it printed was kept; free the space and run it again to see it"
        )


def _printed(logs: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """The logs that hold something (an empty one is a step's that printed nothing)."""
    kept = []
    for title, path in logs:
        try:
            if path.stat().st_size:
                kept.append((title, path))
        except OSError:
            continue
    return kept


def _nothing_printed(root: Path, run: Any, step: str | None, stream: str) -> None:
    """Show the cached logs that stand for a run's (or step's), or say why it has none."""
    from shinobi.errors import UsageError
    from shinobi.local_runs import is_running, slice_note, step_statuses

    _refuse_unknown_step(run, step)
    origins = _cache_origins(run, step)
    if origins:
        _cached_logs(root, run, step, stream, origins)
        return
    what = f"step {step!r} of run {run.run_id}" if step else f"run {run.run_id}"
    _refuse_lost(run, step, stream, what)
    status = step_statuses(run).get(step) if step is not None else None
    if status is None and step is not None:  # a slice a failure kept from starting?
        note = slice_note(run, step)
        status = "not run" if note is not None and not note.started else None
    if status in ("not run", "skipped"):
        why = " (skipped)" if status == "skipped" else ""
        raise UsageError(f"{what} did not run{why}, so it printed nothing")
    other = _printed(_streams(run, step, "both")) if stream != "both" else []
    if other:
        kept = " and ".join(sorted({title.rsplit(" ", 1)[1] for title, _ in other}))
        raise UsageError(
            f"{what} printed nothing to {stream}; it kept a {kept} log (`--stream both`"
            " shows every log)"
        )
    if is_running(run.path):  # asked now: a run followed to its end was running
        named = f"{run.run_id} {shlex.quote(step)}" if step is not None else run.run_id
        raise UsageError(
            f"{what} has printed nothing yet (the run is still going; `ninja logs --follow"
            f" {named}` shows what it prints as it comes)"
        )
    empty = _streams(run, step, stream)  # a Slurm job's, made as it started
    if step is not None and empty:
        raise UsageError(
            f"{what} printed nothing, so it kept no logs (its log {empty[0][1]} is empty)"
        )
    if status == "unknown":  # running when its run was killed
        raise UsageError(
            f"{what} printed nothing, so it kept no logs (it was running when the run ended"
            " abruptly: how it ended is not known)"
        )
    if status is not None:  # a step the run has, that ended as said and printed nothing
        raise UsageError(f"{what} printed nothing, so it kept no logs (it ended {status})")
    if step is None:
        raise UsageError(
            f"{what} kept no logs (a step that printed nothing has none; step logs are in"
            f" {run.path / 'logs'})"
        )
    # a step of the run that printed nothing, or (a run of an older ninja, which
    # kept no list of its steps) a misspelt name, which reads alike: neither is claimed
    raise UsageError(
        f"run {run.run_id} kept no logs of a step {step!r}{_closest_step(run, step)} (a"
        f" step that printed nothing has none; step logs are in {run.path / 'logs'})"
    )


def _cache_origins(run: Any, step: str | None) -> dict[str, list[str]]:
    """The runs whose step cache served ``run``'s steps (or ``step`` and its slices),
    with the steps each served.

    A step served from the cache did not run, so it printed nothing here: what
    it printed is in the logs of the run that ran it.
    """
    origins: dict[str, list[str]] = {}
    for name, origin, _ in _served(run):
        wanted = step is None or name == step or name.startswith(f"{step}[")
        wanted = wanted or (step is not None and "." in step and _in_slices(step, name))
        if wanted and isinstance(origin, str) and origin:
            origins.setdefault(origin, []).append(name)
    return origins


def _served(run: Any) -> list[tuple[str, object, str]]:
    """(step, the run that ran it, the step's name there) for each step ``run``
    took from the cache, as its manifest records them or, without one, the
    small file every run that took steps from the cache leaves (see
    :mod:`shinobi.records`). The name there differs when another step of the
    same command made the result."""
    import json

    from shinobi.provenance import load_manifest
    from shinobi.records import CACHE_ORIGINS

    try:
        steps = load_manifest(run.path / "manifest.json")["steps"]
    except (ValueError, KeyError, TypeError):  # no manifest, or not one
        try:
            recorded = json.loads((run.path / CACHE_ORIGINS).read_text())
            served, ran_as = recorded["steps"], recorded.get("ran_as") or {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):  # none, or damaged
            return []
        if not isinstance(served, dict) or not isinstance(ran_as, dict):
            return []
        return [(str(n), o, str(ran_as.get(n, n))) for n, o in served.items()]
    found: list[tuple[str, object, str]] = []
    for record in steps if isinstance(steps, list) else []:
        if isinstance(record, dict) and record.get("cached"):
            details = record.get("details")
            details = details if isinstance(details, dict) else {}
            name = str(record.get("name"))
            found.append((name, details.get("cached_from"), str(details.get("cached_step", name))))
    return found


def _note_cached_slices(run: Any, step: str) -> None:
    """Say which slices of a scattered ``step`` were taken from the step cache: they
    printed nothing in this run, and would otherwise be silently missing."""
    for origin, names in _cache_origins(run, step).items():
        shown = listed(names, 5)
        were, them = ("was", "it") if len(names) == 1 else ("were", "them")
        click.echo(
            f"ninja: note: {shown} of run {run.run_id} {were} taken from the step cache of run"
            f" {origin}, which ran {them} (`ninja logs {origin} {shlex.quote(step)}` shows what"
            " it printed)",
            err=True,
        )


def _cached_logs(
    root: Path, run: Any, step: str | None, stream: str, origins: dict[str, list[str]]
) -> None:
    """Print what a cached ``step`` printed when the run it came from ran it, saying which
    run that was; a one-line error naming that run when its logs are not here."""
    from shinobi.errors import UsageError
    from shinobi.local_runs import find_local_run

    what = f"step {step!r} of run {run.run_id}" if step else f"run {run.run_id}"
    ids = ", ".join(origins)
    if step is None:  # another run's every log would be more than was asked for
        steps = sum(len(names) for names in origins.values())
        said = (
            f"{what} kept no logs: {steps} of its steps were taken from the step cache of"
            f" run {ids}, which ran them"
        )
        gone = [origin for origin in origins if find_local_run(root, origin) is None]
        if gone:
            raise UsageError(f"{said}; {_not_here(gone, step)}")
        raise UsageError(f"{said} ({_see(next(iter(origins)), step)} shows what they printed)")
    there = next((ran_as for name, _, ran_as in _served(run) if name == step), step)
    if there != step:  # another step of this command made the result
        what += f" (the result of step {there!r})"
    shown = False
    for origin in origins:
        source = find_local_run(root, origin)
        found = _streams(source, there, stream) if source is not None else []
        if not found:
            continue
        click.echo(
            f"ninja: note: {what} was taken from the step cache: these are the logs of run"
            f" {origin}, which ran it",
            err=True,
        )
        echo_logs(found, {}, False)
        shown = True
    if not shown:
        here = [o for o in origins if find_local_run(root, o)]
        why = (
            f"run {ids} kept no {'logs' if stream == 'both' else stream} of it either (a"
            " step that printed nothing has none)"
            if len(here) == len(origins)
            else _not_here(list(origins), step)
        )
        raise UsageError(f"{what} was taken from the step cache of run {ids}, which ran it: {why}")


def _see(origin: str, step: str | None) -> str:
    """The command that shows what ``origin`` printed (for ``step``)."""
    return f"`ninja logs {origin}{f' {shlex.quote(step)}' if step else ''}`"


def _not_here(origins: list[str], step: str | None) -> str:
    """Why the logs of ``origins``, runs that served steps from the cache, cannot be
    shown: their folders are gone from this workspace."""
    return (
        f"run {', '.join(origins)} is not here (removed by `ninja clean --runs`, or of"
        f" another workspace: {_see(origins[0], step)} there)"
    )


def _closest_step(run: Any, step: str | None) -> str:
    """``"; did you mean 'tool'?"`` when ``step`` is near a step that kept logs.

    A run of an older ninja without a manifest kept no list of its steps, so a
    misspelt name cannot be told from a silent step; the steps that printed can
    still be offered.
    """
    from shinobi.errors import did_you_mean
    from shinobi.local_runs import run_logs

    if step is None:
        return ""
    names = {title.rsplit(" ", 1)[0] for title, _ in run_logs(run, None)}
    names.update(name for name, _, _ in _served(run))
    names.discard(step)  # never "did you mean" the very name given
    return did_you_mean(step, names)


def _refuse_unknown_step(run: Any, step: str | None) -> None:
    """Say so when ``step`` is not a step of ``run`` at all, where the run tells: its
    manifest, or the list of steps it noted as it started.

    (A run of an older ninja that kept neither has no list of its steps: its
    silent steps and misspelt names read alike.)
    """
    from shinobi.errors import UsageError, did_you_mean

    if step is None:
        return
    names = _steps_of(run)
    if names is None or _names_a_step(step, names):
        _refuse_slice_beyond(run, step)
        return
    listing = listed(names, 8)
    raise UsageError(
        f"run {run.run_id} has no step {step!r}{did_you_mean(step, names)} (its steps: {listing})"
    )


def _refuse_slice_beyond(run: Any, step: str) -> None:
    """Say so when ``step`` is a slice past the end of its scattered step, as the run
    noted it: a slice near its number is no answer to a number beyond them all."""
    from shinobi.errors import UsageError
    from shinobi.local_runs import slice_note
    from shinobi.step_names import scattered_step

    note = slice_note(run, step)
    if note is None or note.index < note.count:
        return
    scatter = scattered_step(step)
    had = {0: "no slices (its list to scatter over was empty)", 1: f"1 slice, {scatter}[0]"}
    slices = had.get(
        note.count, f"{note.count} slices, {scatter}[0] to {scatter}[{note.count - 1}]"
    )
    raise UsageError(f"run {run.run_id} has no step {step!r}: step {scatter!r} had {slices}")


def _steps_of(run: Any) -> list[str] | None:
    """The steps of ``run`` as its manifest lists them, else as it noted them when it
    started; None when it kept neither."""
    from shinobi.local_runs import recorded_steps
    from shinobi.provenance import load_manifest

    try:
        return [str(s["name"]) for s in load_manifest(run.path / "manifest.json")["steps"]]
    except (ValueError, KeyError, TypeError):  # no manifest, or not one
        return recorded_steps(run)


def _names_a_step(step: str, names: list[str]) -> bool:
    """Whether ``step`` names one of ``names`` or a part of it: a slice (``b[1]``, a
    step of one, ``sub[0].a``), a nested recipe or a loop (``sub``, ``loop.2``),
    whose logs are those of the steps inside."""
    base = _SLICE.sub("", step)
    return any(n == base or n.startswith(f"{base}.") for n in (_SLICE.sub("", n) for n in names))


#: A slice's index in a step's name.
_SLICE = re.compile(r"\[\d+\]")


def _local_runs_here(root: Path) -> str:
    """What the local runs of ``root`` would have answered to, for a name that matched none."""
    from shinobi.local_runs import local_runs

    recipes = sorted({run.recipe for run in local_runs(root) if run.recipe})
    if not recipes:
        return "no local run here either"
    return f"local runs here are of {', '.join(recipes)} (`ninja runs` lists their ids)"
