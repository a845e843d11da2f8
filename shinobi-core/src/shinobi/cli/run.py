"""``ninja run FILE.py:NAME``: run a recipe here, or draw it with ``--dryrun``."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import click

from shinobi.cli import collector
from shinobi.cli.machine_output import (
    MachineOutputCommand,
    emit,
    json_document,
    printing_a_record,
)
from shinobi.cli.recipe_options import RecipeCommand, recipe_values

__all__ = ["command"]


class _RunCommand(MachineOutputCommand, RecipeCommand):
    """With --json (of a run or a dry run) stdout carries the JSON document alone."""


@click.command(
    cls=_RunCommand, short_help="Run a recipe here (or with --dryrun, show what would run)."
)
@click.argument("target", metavar="FILE.py:NAME")
@click.option(
    "--backend",
    "-b",
    metavar="NAME",
    help="Backend for steps that name none (native, venv, docker, slurm, ...).",
)
@click.option(
    "--max-workers",
    "-j",
    type=click.IntRange(min=1),
    help="Steps run at once in recipes that do not set max_workers themselves.",
)
@click.option(
    "--dryrun",
    "--dry-run",
    "dryrun",
    is_flag=True,
    help="Show every step, its command line and its edges; run nothing.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result (or the dry-run plan) as JSON on stdout, and all else on stderr.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Run every step, ignoring cached results, and store the new ones.",
)
@click.option(
    "--provenance/--no-provenance",
    default=None,
    help="Write a run manifest (default: config provenance.enabled).",
)
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Where .shinobi/ (run records, logs) goes;"
    " default: execution.workdir if configured, else the current directory.",
)
@click.pass_context
def command(
    ctx: click.Context,
    target: str,
    backend: str | None,
    max_workers: int | None,
    dryrun: bool,
    as_json: bool,
    no_cache: bool,
    provenance: bool | None,
    workdir: Path | None,
    **params: Any,
) -> None:
    """Run the recipe NAME defined in FILE.py on this machine.

    The recipe's own inputs are options of this command: see them with
    `ninja run FILE.py:NAME --help`. A list input is given by repeating its
    option (--ms a.ms --ms b.ms).
    """
    from shinobi.cli.named_config import warn_if_named_file_missing
    from shinobi.config import load_config
    from shinobi.plan import check_statically
    from shinobi.runner import as_recipe, prepare, validate_recipe_inputs

    recipe, values = recipe_values(ctx, params)
    if backend is not None and not backend.strip():
        from shinobi.errors import UsageError

        raise UsageError("--backend needs a name (see `ninja backends`)")
    recipe = as_recipe(recipe)
    config = load_config({"execution.max_workers": max_workers, "provenance.enabled": provenance})
    warn_if_named_file_missing()
    with collector.building(last=dryrun):  # a run goes on to its steps
        inputs = validate_recipe_inputs(recipe, values)
        graph = prepare(recipe, backend, config)
        # The dry run draws the plan the check makes: plan once, not once per use.
        plan = check_statically(graph, inputs, keep_plan=dryrun)
        if dryrun:
            from shinobi.cli.dryrun import show_dryrun

            if workdir is None:  # refused by the run: a dry run that passed would mislead
                config.execution.workdir_path()
            show_dryrun(graph, inputs, config, backend, as_json, plan)
            return
    _run(graph, inputs, config, backend, as_json, no_cache, provenance, workdir)


def _run(
    graph: Any,
    inputs: dict[str, Any],
    config: Any,
    backend: str | None,
    as_json: bool,
    no_cache: bool,
    provenance: bool | None,
    workdir: Path | None,
) -> None:
    from shinobi.cli.main import settle_exit_status
    from shinobi.render.progress import make_progress
    from shinobi.runner import Interrupted, run_prepared
    from shinobi.steps.result import shown_outputs

    progress = make_progress(graph.working_steps(), heartbeat=not as_json)
    try:
        with _shown_until_done(progress):
            result = run_prepared(
                graph,
                inputs,
                backend=backend,
                config=config,
                workdir=workdir,
                observers=[progress],
                refresh_cache=no_cache,  # stores what it ran: the next run replays that
                provenance=provenance,
            )
    except Interrupted as stopped:
        settle_exit_status(stopped.exit_code)
        if as_json:  # a program reading it learns which steps ended how, as after a failure
            with printing_a_record(partial(_kept_in, stopped.result, config, workdir)):
                emit(json_document(_result_json(stopped.result, graph, stopped)))
        else:
            with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
                sys.stderr.write(
                    _logs_hint(
                        stopped.result, None, workdir, _folder(stopped.result, config, workdir)
                    )
                )
        raise
    if not result.ok:
        settle_exit_status(1)  # what is printed next cannot undo it
    with printing_a_record(partial(_kept_in, result, config, workdir)):
        if as_json:
            emit(json_document(_result_json(result, graph)))
        else:
            for name, value in shown_outputs(result.outputs, result.steps).items():
                click.echo(f"{name} = {_shown(value)}")
    if not result.ok:
        from shinobi.errors import StepFailed
        from shinobi.render.terminal_text import for_terminal

        failed = next((s for s in result.steps if s.name == result.failed_step), None)
        if failed is not None and not as_json:
            sys.stderr.write(_stderr_tail(failed, str(result.run_id)))
            sys.stderr.write(_engine_said(failed))
        if not as_json:  # --json has the run id in its document
            sys.stderr.write(_logs_hint(result, failed, workdir, _folder(result, config, workdir)))
        error = for_terminal(str(result.error))  # it may quote the tool's own output
        if result.failed_step is None:  # every step ran; the recipe's outputs did not hold
            raise StepFailed(error)
        raise StepFailed(f"step {result.failed_step!r} failed: {error}")


@contextlib.contextmanager
def _shown_until_done(progress: Any) -> Iterator[None]:
    """Progress shown while the block runs, closed (a live view erased) before
    anything is said of how the run ended, however it ended."""
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
            progress.close()


def _logs_hint(result: Any, failed: Any, workdir: Path | None, folder: Path) -> str:
    """The run's id, and the ``ninja logs`` command that shows what the ``failed``
    step printed (or every step, with none to blame): a run that ended badly
    named neither, and its folder had to be found by its time. The run's
    records are in ``folder``, under ``--workdir`` when it was given; a step
    that printed nothing (one refused before it started) has no logs to show."""
    from shinobi.local_runs import describe_run, run_logs
    from shinobi.render.shell_words import logs_command

    run = str(result.run_id)
    where = None if workdir is None else str(workdir.resolve())
    if failed is None:
        return f"  run {run}: `{logs_command(run, workdir=where)}` shows what its steps printed\n"
    leaf = _failing_leaf(failed).name
    if not run_logs(describe_run(folder), leaf):
        return f"  run {run}: step {leaf!r} printed nothing\n"
    return f"  run {run}: `{logs_command(run, leaf, where)}` shows what the step printed\n"


def _failing_leaf(step: Any) -> Any:
    """The slice (or nested recipe's step) that failed, down to one that ran alone:
    a scattered step's stderr is every slice's joined, and the other slices'
    notes would bury the failing one under lines it never wrote."""
    from shinobi.steps.result import failing_part

    part = failing_part(step.slices or step.details.get("steps") or ())
    return step if part is None else _failing_leaf(part)


def _own_stderr(step: Any) -> str:
    """The stderr of what failed, as ``ninja logs`` shows it (see :func:`_failing_leaf`)."""
    return str(_failing_leaf(step).stderr)


def _stderr_tail(step: Any, run_id: str) -> str:
    """The last lines the failed ``step`` wrote to stderr, each cut to what a
    FAILED line quotes (:data:`~shinobi.failures.QUOTED_LINE`), and where the
    cut lines are whole: one line of a quarter of a million characters took
    3,300 rows and pushed the error that matters off the screen."""
    from shinobi.failures import QUOTED_LINE, cut_line
    from shinobi.render.shell_words import shell_join
    from shinobi.render.terminal_text import for_terminal

    lines = [for_terminal(line) for line in _own_stderr(step).strip().splitlines()[-10:]]
    cut = [len(line) > QUOTED_LINE for line in lines]
    shown = "".join(f"  | {cut_line(line)}\n" for line in lines)
    if any(cut):
        logs = shell_join(["ninja", "logs", run_id, _failing_leaf(step).name, "--stream", "stderr"])
        shown += f"  (the cut lines are whole in `{logs}`)\n"
    return shown


def _engine_said(step: Any) -> str:
    """What the failed step's container engine printed of its own (a warning that
    networking will not work, say), which may be why the tool failed: apart from
    the tool's lines, each marked with the engine's name (see ``BackendRun.engine_stderr``)."""
    from shinobi.render.terminal_text import for_terminal

    step = _failing_leaf(step)
    said = str(step.details.get("engine_stderr") or "").strip().splitlines()[-5:]
    return "".join(f"  {step.backend}: {for_terminal(line)}\n" for line in said if line.strip())


def _folder(result: Any, config: Any, workdir: Path | None) -> Path:
    """The run's folder, in the workspace the run chose."""
    from shinobi.local_runs import runs_root

    base = workdir or config.execution.workdir_path() or Path.cwd()
    return runs_root(Path(base).resolve()) / str(result.run_id)


def _kept_in(result: Any, config: Any, workdir: Path | None) -> str:
    """Where the run is on record, for a result stdout refused: its manifest, else
    its folder (which holds its steps' logs, not their outputs)."""
    folder = _folder(result, config, workdir)
    manifest = folder / "manifest.json"
    if manifest.is_file():
        return f"the run's result is in its manifest, {manifest}"
    return (
        f"the run's records are in {folder} (`ninja logs {result.run_id}`);"
        " --provenance keeps a run's result there too"
    )


def _result_json(result: Any, graph: Any, stopped: Any = None) -> dict[str, Any]:
    """The run's result; ``stopped`` (an Interrupted) says it as the manifest does:
    ``interrupted`` (or ``interrupted, not all stopped``), the signal, and no step
    to blame unless one had failed before.

    Every step of the recipe is listed, as in the manifest: those the run
    ended without starting (after a failure, or an interrupt) as ``not run``,
    after the steps that ended, so a program reading it sees the whole recipe.
    """
    from shinobi.steps.result import shown_outputs

    data = {
        "recipe": result.name,
        "run_id": result.run_id,
        "status": result.status,
        "outputs": shown_outputs(result.outputs, result.steps),
        "failed_step": result.failed_step,
        "error": result.error,
        "warnings": result.warnings,
        "steps": _steps_json(result.steps, graph),
    }
    if stopped is not None:
        from shinobi.teardown import interrupted_fields

        data.update(interrupted_fields(stopped.signum, stopped.undying, result))
        data["error"] = str(stopped)
    return data


def _steps_json(results: list[Any], graph: Any, prefix: str = "") -> list[dict[str, Any]]:
    """The results of ``graph``'s steps that ended, then its steps that never started
    (a nested recipe's too, whose names ``prefix`` starts)."""
    nodes = {f"{prefix}{node.name}": node for node in graph.nodes}
    entries = [_step_json(step, nodes.get(step.name)) for step in results]
    ended = {step.name for step in results}
    return entries + [_not_run(name, node) for name, node in nodes.items() if name not in ended]


def _not_run(name: str, node: Any, *, a_slice: bool = False) -> dict[str, Any]:
    """A step (or ``a_slice`` of one) the run never started, in the shape of one
    that ended: a nested recipe with its steps (none started), a scatter with no
    slices."""
    entry: dict[str, Any] = {
        "name": name,
        "status": "not run",
        "returncode": None,
        "signal": None,
        "error": None,
        "warnings": [],
        "backend": None,
        "argv": None,
        "started": None,
        "finished": None,
    }
    if node is None:
        return entry
    if node.scatter and not a_slice:
        entry["slices"] = []  # its steps are its slices' (sub[0].first): none planned
    elif node.subgraph is not None:
        entry["steps"] = [_not_run(f"{name}.{n.name}", n) for n in node.subgraph.nodes]
    return entry


def _step_json(step: Any, node: Any = None) -> dict[str, Any]:
    """One step's result, with its slices and a nested recipe's steps, as the dry run
    shows them: a scattered step's command lines are its slices'. A nested recipe
    lists its steps that never started too, when its ``node`` is known."""
    entry: dict[str, Any] = {
        "name": step.name,
        "status": step.status,
        "returncode": step.returncode,
        # the signal that killed it, whatever the route: a returncode is -N natively
        # and on Slurm, 128+N where a container's init reports the death
        "signal": step.signal,
        "error": step.error,
        "warnings": step.warnings,
        "backend": step.backend,
        "argv": step.argv,
        "started": step.started,
        "finished": step.finished,
    }
    if step.slices is not None:
        # a slice of a nested recipe lists the steps a failure kept from starting too
        entry["slices"] = [_step_json(s, node) for s in step.slices]
        # those a failure or an interrupt kept from starting, as the manifest lists them
        never = step.details.get("slices_not_run")
        entry["slices"] += [_not_run(f"{step.name}[{k}]", node, a_slice=True) for k in never or ()]
    inner = step.details.get("steps")
    if isinstance(inner, list):
        subgraph = getattr(node, "subgraph", None)
        entry["steps"] = (
            _steps_json(inner, subgraph, f"{step.name}.")
            if subgraph is not None
            else [_step_json(s) for s in inner]
        )
    return entry


def _shown(value: Any) -> str:
    """An output as a person reads it: paths as paths, lists of them as [a, b], a
    model, a mapping or a set as the JSON ``--json`` gives (Python's ``str()`` of
    a model, ``solint=3 mode='p'``, is no value anyone can give back), and no
    escape code of a tool's own, which would act on the terminal."""
    from shinobi.render.terminal_text import for_terminal

    if isinstance(value, list | tuple):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, str | os.PathLike | int | float) or value is None:
        return for_terminal(str(value))  # a Path's str is the path; its repr is PosixPath('...')
    import json

    from shinobi.json_values import json_data

    return for_terminal(json.dumps(json_data(value), default=str))
