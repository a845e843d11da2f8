"""Running a recipe from Python or the CLI: one call that does a whole run.

It validates the recipe's inputs and graph, checks every backend the run will
need before anything starts, turns SIGINT/SIGTERM/SIGHUP into a deliberate
teardown, and returns the :class:`RecipeResult`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shinobi.errors import CallRefused, InputError, ShinobiError, UsageError, exception_line
from shinobi.steps.result import every_step, first_failed

if TYPE_CHECKING:
    from shinobi.config import AppConfig
    from shinobi.graph import Graph, Node
    from shinobi.records import Records
    from shinobi.session import RunObserver, Session
    from shinobi.steps.recipe import Recipe
    from shinobi.steps.result import RecipeResult

__all__ = [
    "Interrupted",
    "as_recipe",
    "precheck_backends",
    "prepare",
    "refuse_ambiguous_aliases",
    "run_prepared",
    "run_recipe",
    "validate_recipe_inputs",
]


class Interrupted(ShinobiError):
    """The run was stopped by a signal; ``exit_code`` is 128 + the signal number."""

    def __init__(self, signum: int, result: RecipeResult, undying: tuple[int, ...]) -> None:
        self.signum = signum
        self.result = result
        self.undying = undying
        from shinobi.teardown import still_running

        name = signal.Signals(signum).name
        # what a backend could not confirm stopped elsewhere (a Slurm job whose
        # controller did not answer the scancel): the run is not over there
        elsewhere = still_running(result)
        if undying or elsewhere:
            said = []
            if undying:
                pids = ", ".join(str(p) for p in undying)
                said.append(
                    f"process(es) {pids} would not die (uninterruptible I/O?); their"
                    " workspaces were left in place"
                )
            if elsewhere:
                its = "their cancellations were" if len(elsewhere) > 1 else "its cancellation was"
                said.append(
                    f"{', '.join(elsewhere)} may still be running: {its} never confirmed (each"
                    " step's error above says how to check and stop it)"
                )
            message = f"stopped by {name}, but " + "; and ".join(said)
            self.exit_code = 1
        else:
            ran_on = [s.name for s in every_step(result.steps) if s.details.get("ran_on")]
            if ran_on:
                names = ", ".join(repr(n) for n in ran_on)
                message = (
                    f"stopped by {name}; every step was torn down but the Python step(s)"
                    f" {names}, which ran inside ninja to their end"
                )
            else:
                message = f"stopped by {name}; every step was torn down"
            failed = first_failed(result.steps)
            if failed is not None:  # the failure came first: it must not be hidden
                message += f"; step {failed.name!r} had failed before: {failed.error}"
            self.exit_code = 128 + signum
        super().__init__(message)


def as_recipe(step: Any) -> Recipe:
    """A recipe for ``step``: a Recipe as is, a single cab or pystep wrapped in one.

    Anything else is refused in one line (a recipe's name as a string, None):
    it failed with an AttributeError from deep inside.
    """
    from shinobi.steps.recipe import Recipe

    if isinstance(step, Recipe):
        return step
    from shinobi.loaders import is_runnable, kind_of_value

    if not is_runnable(step):
        raise CallRefused(
            f"run_recipe was given {kind_of_value(step)}: give it a Recipe, a Cab or a step"
            " made by @shinobi.pystep or @shinobi.step (a target such as 'file.py:name' is"
            " loaded by shinobi.loaders.load_target)"
        )
    from shinobi.steps.recipe import StepRef
    from shinobi.steps.refs import InputRef, OutputRef

    wiring = {f: InputRef(f) for f in step.inputs_model.model_fields}
    inputs, outputs = _wrapper_models(step)
    wrapper = Recipe(
        name=step.name,
        inputs_model=inputs,
        outputs_model=outputs,
        steps=[StepRef(step.name, step, wiring)],
    )
    for out in step.outputs_model.model_fields:
        wrapper.set_output(out, OutputRef(step.name, out))
    return wrapper


def _wrapper_models(step: Any) -> tuple[Any, Any]:
    """The models of a recipe that runs ``step`` alone.

    A step scattered by its own declaration (``@pystep(scatter=[...])``) takes a
    list for each scattered input, one element per slice, and gathers every
    output into a list: the recipe's models say so, so that ``ninja run`` of it
    offers ``--field`` as a repeatable option.
    """
    scattered = set(getattr(step, "scatter", ()) or ())
    if not scattered:
        return step.inputs_model, step.outputs_model
    from pydantic import create_model

    listed = list  # a list of whatever each field holds, built at run time
    inputs: dict[str, Any] = {}
    for name, info in step.inputs_model.model_fields.items():
        inputs[name] = (
            (listed[info.annotation], ...) if name in scattered else (info.annotation, info)
        )
    outputs: dict[str, Any] = {
        n: (listed[i.annotation], ...) for n, i in step.outputs_model.model_fields.items()
    }
    return (
        create_model(f"{step.name}_inputs", **inputs),
        create_model(f"{step.name}_outputs", **outputs),
    )


def _refuse_empty_paths(recipe: Recipe, values: Mapping[str, Any], made: dict[str, Any]) -> None:
    """Refuse a path given as "", which pydantic takes for the current directory.

    The command line refuses ``--out ""``; a value given from Python, or a
    blank deep in a JSON mapping, is refused alike.
    """
    from shinobi.nested_keys import input_spellings
    from shinobi.steps.types import EMPTY_PATH, empty_path_in

    spelled = input_spellings(recipe.inputs_model)
    by_key = {key: made[name] for key, name in spelled.items() if key in values and name in made}
    empty = empty_path_in(values, by_key)
    if empty is not None:
        raise InputError(recipe.name, empty, EMPTY_PATH)


def refuse_unknown_inputs(recipe: Recipe, values: Mapping[str, Any]) -> None:
    """Refuse a value for an input the recipe does not have, or a key a model
    input does not have (``{"solve": {"solnt": 10}}``).

    A pydantic model ignores keys it does not know, so a misspelt input would
    run the recipe on that input's default; the command line refuses an
    unknown option, and the Python API refuses the key alike. An inputs model
    that keeps extra keys (``extra="allow"``) takes any; a model inside an
    input keeps what it says about them (see :mod:`shinobi.nested_keys`).
    """
    refuse_ambiguous_aliases(recipe)
    _refuse_unknown_top_keys(recipe, values)
    _refuse_unknown_nested_keys(recipe, values)


def refuse_ambiguous_aliases(recipe: Recipe) -> None:
    """Refuse an inputs model in which one key names two fields (see
    :func:`shinobi.nested_keys.ambiguous_alias`): whichever field the caller
    meant, both would be set."""
    from shinobi.nested_keys import ambiguous_alias

    clash = ambiguous_alias(recipe.inputs_model)
    if clash is not None:
        alias, name, other = clash
        whose = "the name" if alias == other else "an alias"
        raise UsageError(
            f"recipe {recipe.name!r}: input {name!r} has the alias {alias!r}, which is"
            f" also {whose} of input {other!r}, so that key would set both;"
            " rename the alias or the field"
        )


def _refuse_unknown_top_keys(recipe: Recipe, values: Mapping[str, Any]) -> None:
    """Refuse a key that is no input's name nor alias (``{"mgs": "hi"}``)."""
    from shinobi.errors import did_you_mean
    from shinobi.nested_keys import input_spellings

    model = recipe.inputs_model
    if getattr(model, "model_config", {}).get("extra") == "allow":
        return
    known = input_spellings(model)
    for key in values:
        if key not in known:
            fields = list(getattr(model, "model_fields", {}))
            hint = did_you_mean(str(key), fields) or f" (its inputs: {', '.join(fields) or 'none'})"
            raise UsageError(f"recipe {recipe.name!r} has no input {key!r}{hint}")


def _refuse_unknown_nested_keys(recipe: Recipe, values: Mapping[str, Any]) -> None:
    """Refuse a key a model inside an input would drop (``solve.solnt``), said as
    an input error so the command line names the option that gave it."""
    from shinobi.errors import did_you_mean
    from shinobi.nested_keys import unknown_key

    nested = unknown_key(recipe.inputs_model, values)
    if nested is not None:
        key, known = nested.path[-1], nested.known
        hint = did_you_mean(key, known) or f" (its keys: {', '.join(known) or 'none'})"
        raise InputError(recipe.name, ".".join(nested.path), f"no such key{hint}")


def validate_recipe_inputs(recipe: Recipe, values: Mapping[str, Any]) -> dict[str, Any]:
    """The recipe's inputs as its inputs model validates them; any it refuses, refused."""
    from pydantic import ValidationError

    from shinobi.exit_guard import validated
    from shinobi.steps.types import error_field, field_values, union_refusal

    refuse_unknown_inputs(recipe, values)
    try:
        # by name too: an aliased field given by its name must not fall back to its default
        made = field_values(
            validated(recipe.inputs_model.model_validate, dict(values), by_name=True)
        )
    except ValidationError as exc:
        errors = exc.errors()
        field, said = union_refusal(recipe.inputs_model, errors) or (
            error_field(errors[0]),
            errors[0]["msg"],
        )
        raise InputError(recipe.name, field, said) from None
    except Exception as exc:  # a validator of the model's own that raised something else
        raise UsageError(
            f"recipe {recipe.name!r}: validating its inputs raised {exception_line(exc)}"
        ) from None
    _refuse_empty_paths(recipe, values, made)
    return made


def prepare(recipe: Recipe, backend: str | None, config: AppConfig) -> Graph:
    """Build the graph and check every backend name the run can reach."""
    from shinobi.backends.registry import BACKENDS, check_name
    from shinobi.errors import BackendNotFound
    from shinobi.graph import build_graph

    graph = build_graph(recipe)
    run_wide = backend or config.backend.default
    names = {run_wide}
    naming: dict[str, str] = {}  # a backend only steps name: the first step to name it
    for path, node in graph.walk():
        if node.backend:
            names.add(node.backend)
            naming.setdefault(node.backend, path)
    for name in sorted(names):
        try:
            check_name(BACKENDS, name)
        except BackendNotFound as exc:
            if name != run_wide:  # the step says which: in a large recipe, say where
                raise BackendNotFound(f"step {naming[name]!r}: {exc}") from None
            if backend:
                raise
            origin = config.sources.get("backend.default", "the defaults")
            raise BackendNotFound(f"{exc}; it is backend.default, from {origin}") from None
    return graph


@contextlib.contextmanager
def _signals(session: Session) -> Iterator[None]:
    """Route SIGINT/SIGTERM/SIGHUP to a deliberate teardown (main thread only)."""
    from shinobi.stop_signals import handled

    def handler(signum: int, _frame: Any) -> None:
        if session.interrupted is None:
            session.interrupted = signum
            session.control.request_stop()  # before the teardown gets going
            if session.running_steps():  # else there is nothing to wait for
                elsewhere = (  # a batch job is not a process here: its scheduler ends it
                    "; jobs on a cluster are cancelled through its scheduler"
                    if session.runs_elsewhere()
                    else ""
                )
                said = (
                    f"ninja: {signal.Signals(signum).name}: stopping the running steps (SIGTERM,"
                    f" then SIGKILL after {session.control.grace:g} s{elsewhere}); interrupt"
                    " again to kill them now"
                )
                _say_at_once(session, said, session.control.grace)
        elif not session.control.hurry.is_set():  # again: no more waiting on the grace
            session.control.hurry.set()
            said = "ninja: interrupted again: killing the steps now (SIGKILL)"
            running = sorted(session.in_process)
            if running:
                said += (
                    f"; Python step(s) {', '.join(repr(n) for n in running)} run inside ninja"
                    " and cannot be killed: waiting for them to return"
                )
            _say_at_once(session, said, 0)

    with handled(handler):
        yield


def _say_at_once(session: Session, said: str, kill_in: float) -> None:
    """Say what a stop signal does, from its handler: through a live view that
    takes it (``stop_notice``: it only notes it, for its drawing thread to print
    above the view, so the handler waits on no lock the interrupted code may
    hold), else straight to stderr. Written past a live view, the line was
    erased by its next redraw, and the view's rows went stale."""
    taken = [told(said, kill_in) for told in _stop_notices(session)]
    if not any(taken):
        with contextlib.suppress(OSError):
            os.write(2, f"{said}\n".encode("utf-8", "backslashreplace"))


def _stop_notices(session: Session) -> list[Callable[[str, float], bool]]:
    """The observers' ``stop_notice`` methods (a live view's: see :func:`_say_at_once`)."""
    found = (getattr(observer, "stop_notice", None) for observer in session.observers)
    return [told for told in found if told is not None]


def _plan_once(graph: Graph, values: dict[str, Any], cwd: str) -> Callable[[], Any]:
    """The static plan of ``graph``, made on first use and shared by the checks
    that need one (a run without them plans nothing)."""

    @functools.cache
    def plan() -> Any:
        from shinobi.plan import plan_graph

        return plan_graph(graph, values, cwd)

    return plan


def precheck_backends(
    graph: Graph,
    session: Session,
    plan: Callable[[], Any],
    only: Collection[str] | None = None,
) -> None:
    """Let backends that check invocations (mounts, images) refuse before anything runs.

    Only backends that override :meth:`Backend.prepare` cost a static plan, so
    native runs pay nothing for it. ``only`` limits the check to the backends
    it names (a dry run checks what needs no engine: a venv and its tools).
    """
    from shinobi.backends.base import Backend
    from shinobi.dispatch import invocation_for
    from shinobi.plan import cab_of
    from shinobi.step_names import unsliced

    def planned(steps: list[Any]) -> Iterator[Any]:
        for step in steps:
            if step.children is not None:
                yield from planned(step.children.steps)
            yield from step.slices or [step]

    chosen = _chooser(session)
    names = {chosen(node) for _, node in graph.every_node()}
    if only is not None:
        names &= set(only)
    checking = {n for n in names if type(session.backend(n)).prepare is not Backend.prepare}
    if not checking:
        return
    by_backend: dict[str, list[Any]] = {n: [] for n in checking}
    unvenved: set[str] = set()  # pysteps on the venv backend with no venv: run in this process
    for step in planned(plan().steps):
        name = chosen(step.node)
        if name not in by_backend:
            continue
        cab = cab_of(step.node.step)
        if cab is not None and step.argv is not None:
            by_backend[name].append(
                invocation_for(session, step.name, step.node, cab, step.argv, step.paths)
            )
        elif name == "venv" and getattr(step.node.step, "kind", None) == "python":
            # a pystep run by the venv's interpreter: the venv must be there; with none,
            # the backend's one line for steps without a venv names it beside cabs
            venv = session.venv_of(step.node)
            by_backend[name].append(_interpreter_in(session, step.name, venv))
            if not venv:
                unvenved.add(f"pystep-no-venv:{unsliced(step.name)}")
    for name, invocations in by_backend.items():
        for warning in session.backend(name).prepare(invocations):
            session.warn(warning)
    session.said_once(unvenved)  # a slice does not say it again as it starts


def _chooser(session: Session) -> Callable[[Node], str]:
    """:func:`~shinobi.dispatch.choose_backend` for every node of a run, asked once
    per backend a node names when it has no venv: such a node runs on that backend
    or the run's, and choosing warns of nothing. A node with a venv is asked each
    time, as its choice may warn (once per node, in the order nodes are asked)."""
    from shinobi.dispatch import choose_backend

    plain: dict[str | None, str] = {}

    def chosen(node: Node) -> str:
        if node.venv:
            return choose_backend(session, node)
        known = plain.get(node.backend)
        if known is None:
            known = plain[node.backend] = choose_backend(session, node)
        return known

    return chosen


def _look_at_until_files(graph: Graph, session: Session, plan: Callable[[], Any]) -> None:
    """Note where each cycle's until file is, for the scheduler to look at as its
    loop starts, and warn of loops sharing one (see :mod:`shinobi.stale_until`)."""
    if not any(node.until for _, node in graph.walk()):
        return  # no loop: nothing to plan
    from shinobi.stale_until import shared_until_warnings, until_files

    found = until_files(plan(), session.cwd)
    for until in found:
        session.until_planned.setdefault(until.loop, {})[until.iteration] = until.path
    for warning in shared_until_warnings(found):
        session.warn(warning)


def _interpreter_in(session: Session, step: str, venv: str | None) -> Any:
    """What a pystep in ``venv`` runs, as far as it is known before the run: its Python
    starting the runner, which the venv backend checks is a Python a pystep runs under
    (with no venv, it tells the backend a pystep runs in this process)."""
    from shinobi.backends.base import Invocation
    from shinobi.pyrunner import BOOT
    from shinobi.pyrunner.request import interpreter

    argv = (interpreter(venv, session.cwd) if venv else "python3", BOOT)
    return Invocation(step=step, argv=argv, cwd=session.cwd, venv=venv)


def run_recipe(
    recipe: Any,
    inputs: Mapping[str, Any] | None = None,
    *,
    backend: str | None = None,
    max_workers: int | None = None,
    config: AppConfig | None = None,
    workdir: str | Path | None = None,
    cwd: str | Path | None = None,
    observers: Sequence[RunObserver] | None = None,
    use_cache: bool | None = None,
    provenance: bool | None = None,
    refresh_cache: bool = False,
) -> RecipeResult:
    """Run ``recipe`` here and return its result; raises :class:`Interrupted` on a signal.

    ``use_cache`` False keeps the step cache out of the run (nothing read,
    nothing stored); None follows ``cache.enabled``. ``refresh_cache`` runs
    every step without reading the cache and stores the new results in place
    of the old (what ``ninja run --no-cache`` does), when the cache is in use.

    A recipe that cannot run as wired (see :func:`shinobi.plan.preflight`) is
    refused with a :class:`~shinobi.errors.UsageError` before anything runs.
    """
    from shinobi.config import load_config
    from shinobi.plan import check_statically
    from shinobi.run_arguments import checked_inputs, checked_observers, refuse_bad_arguments

    recipe = as_recipe(recipe)
    flags = {"use_cache": use_cache, "provenance": provenance, "refresh_cache": refresh_cache}
    refuse_bad_arguments(config, cwd, workdir, flags)
    observers = checked_observers(observers)
    if config is None:  # the project file of where the steps run, as `ninja run` there reads
        where = _existing(cwd, "cwd") if cwd is not None else None
        config = load_config({"execution.max_workers": max_workers}, cwd=where)
    elif max_workers is not None:
        config = _with_workers(config, max_workers)
    values = validate_recipe_inputs(recipe, checked_inputs(recipe, inputs))
    graph = prepare(recipe, backend, config)
    check_statically(graph, values, str(cwd) if cwd is not None else None)
    return run_prepared(
        graph,
        values,
        config,
        backend=backend,
        workdir=workdir,
        cwd=cwd,
        observers=observers,
        use_cache=use_cache,
        provenance=provenance,
        refresh_cache=refresh_cache,
    )


def _outputs_never_set(graph: Graph) -> list[str]:
    """A warning for each optional output of the recipe that no ``set_output`` wires:
    it is None in every run, and a forgotten ``set_output`` ended the run "ok" with
    ``mask = None`` and no word (a required one is refused where it is declared)."""
    from shinobi.steps.types import fields_of

    recipe = graph.recipe
    return [
        f"recipe {recipe.name!r}: its output {name!r} is never set (no"
        f" set_output({name!r}, ...)), so it is always {spec.default!r}"
        for name, spec in fields_of(recipe.outputs_model).items()
        if name not in graph.outputs
    ]


def _with_workers(config: AppConfig, max_workers: int) -> AppConfig:
    """A copy of ``config`` running ``max_workers`` at once; a number the setting
    refuses is refused in one line (it escaped as pydantic's ValidationError)."""
    from pydantic import ValidationError

    copy = config.model_copy(deep=True)
    try:
        copy.execution.max_workers = max_workers
    except ValidationError as exc:
        said = exc.errors()[0]["msg"]
        raise UsageError(f"run_recipe(max_workers={max_workers!r}): {said}") from None
    return copy


def _close_records(records: Records, result: RecipeResult, session: Session) -> None:
    """Finalise the run's records. One that cannot be written (a full disk) ends a
    run that succeeded with that error; of a run that failed, it is a warning, and
    the step that failed stays what the run's last line names."""
    try:
        records.close(result)
    except OSError as exc:
        where = session.run_dir or "the run folder"
        said = (
            f"the run's records could not all be written ({exc.strerror or exc})"
            f"{' at ' + str(exc.filename) if exc.filename else ''}: its manifest may be"
            f" incomplete; free space or fix permissions in {where}"
        )
        if result.ok:  # the steps' work stands: kept, and said (raised, the outputs were lost)
            result.records_lost = said
        session.warn(said)
    result.warnings = list(session.warnings)  # closing may warn too (a memo the disk refused)


def _close_stopped(records: Records, result: RecipeResult, session: Session) -> int | None:
    """Finalise the run's records once what a stop takes back is taken back: a
    tool's exit 0 just before the signal (see :mod:`shinobi.stop_window`).
    Returns the signal that came before they were written, if one did; one
    that comes while they are written finds the run ended, but what it takes
    back (the step cache would replay it) is, and the records are written again."""
    from shinobi.stop_window import recall_recent

    stopped = session.interrupted
    if stopped is not None:
        recall_recent(session, result)
    result.warnings = list(session.warnings)
    _close_records(records, result, session)
    if stopped is None and session.interrupted is not None and recall_recent(session, result):
        _close_records(records, result, session)
    return stopped


def _existing(path: str | Path, what: str) -> Path:
    """``path``, a directory that exists; else a one-line refusal.

    A typo in ``cwd=`` or ``workdir=`` made the whole tree (``mkdir -p``) and
    ran the tools there, where ``ninja run --workdir`` refuses it: a typo must
    not scatter files.
    """
    found = Path(path)
    if not found.is_dir():
        said = "is not a directory" if found.exists() else "does not exist"
        raise UsageError(f"{what}={str(path)!r} {said}: create it first, or fix the path")
    return found


def run_prepared(
    graph: Graph,
    values: dict[str, Any],
    config: AppConfig,
    *,
    backend: str | None = None,
    workdir: str | Path | None = None,
    cwd: str | Path | None = None,
    observers: Sequence[RunObserver] | None = None,
    use_cache: bool | None = None,
    provenance: bool | None = None,
    refresh_cache: bool = False,
) -> RecipeResult:
    """Run a graph :func:`prepare` built, with inputs already validated
    (``use_cache`` and ``refresh_cache`` as for :func:`run_recipe`).

    The CLI builds and checks the graph before it runs anything (to refuse a
    bad recipe with a usage error); this runs that same graph rather than
    building a 100,000-node graph twice.
    """
    from shinobi.live_runs import launches_going, mark_live, other_runs, unmark_live
    from shinobi.local_runs import hold_run, note_statuses, note_steps, release_run, runs_root
    from shinobi.programs import missing_programs
    from shinobi.records import attach_records
    from shinobi.scheduler import run_graph
    from shinobi.session import Session

    base = (
        _existing(workdir, "workdir")
        if workdir
        else config.execution.workdir_path() or Path(cwd or Path.cwd())
    )
    if cwd:
        _existing(cwd, "cwd")
    session = Session(
        config=config,
        cwd=str(Path(cwd or Path.cwd()).resolve()),
        backend_name=backend,
        observers=list(observers or []),
        use_cache=config.cache.enabled if use_cache is None else use_cache,
        refresh_cache=refresh_cache,
    )
    root = runs_root(base.resolve())
    for said in other_runs(root, config.backend_settings, session.cwd):
        session.warn(said)
    for said in launches_going(base.resolve()):
        session.warn(said)
    session.run_dir = root / session.run_id
    from shinobi.file_digests import make_dirs

    # group-writable where the workspace is (a group's shared one): the first
    # member's umask 022 locked the others out of .shinobi/runs
    make_dirs(session.run_dir / "logs")
    # A signal from here on is one the run answers, whenever it comes: before
    # the first step (nothing starts), during the run, or while its records
    # are written (they are finished, and say what happened).
    with _signals(session):
        # clean --runs leaves it alone
        held = hold_run(session.run_dir, graph.recipe.name, session.warn)
        marker = session.live_marker = mark_live(root, session.run_id, session.cwd)
        if marker is None:  # the guard against two runs at once is off: said, not silent
            session.warn(
                f"this run could not leave its marker in {root.parent / 'live'} (not"
                " writable?): a run started beside it in this workdir is not warned of it,"
                " nor is it of one, and a step of each that writes the same path takes the"
                " other's product for its own; make that folder writable by this user"
            )
        steps = [(f"{within}{node.name}", within, node) for within, node in graph.every_node()]
        note_steps(
            session.run_dir,
            (path for path, _, _ in steps),
            (path for path, _, node in steps if node.subgraph is not None),
            (path for path, within, _ in steps if within),
        )
        ended = "crashed"  # what `ninja runs` says of it unless it gets to say more
        refused = True  # until the checks before the first step are passed
        try:
            plan = _plan_once(graph, values, session.cwd)
            precheck_backends(graph, session, plan)
            for missing in missing_programs(graph, session):
                session.warn(missing)
            for unset in _outputs_never_set(graph):
                session.warn(unset)
            _look_at_until_files(graph, session, plan)
            records = attach_records(session, graph, values, provenance)
            refused = False
            try:
                result = run_graph(graph, values, session)
                if session.interrupted is not None:
                    from shinobi.teardown import finish_interrupted_run

                    session.undying = finish_interrupted_run(session, result)
                else:
                    from shinobi.teardown import undying_of

                    session.undying = undying_of(result)
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    ended = "interrupted"
                else:  # a crash of ninja's: the steps running must not outlive it
                    more = session.control.cancel()  # (the scheduler may have stopped some)
                    session.undying = tuple(sorted({*session.undying, *more}))
                records.abort(exc)
                raise
            result.run_id = session.run_id
            stopped = _close_stopped(records, result, session)
            ended = result.status
            if stopped is not None:
                from shinobi.teardown import interrupted_state

                ended = interrupted_state(session.undying, result)
        finally:
            if not refused:
                walked = () if ended == "ok" else (path for path, _ in graph.walk())
                note_statuses(
                    session.run_dir,
                    walked,
                    session.ended,
                    session.steps_running(),
                    session.planned_slices,
                )
            release_run(held, ended)
            if not session.undying:  # a step that would not die is an orphan once ninja exits
                unmark_live(marker)
            if refused and isinstance(sys.exc_info()[1], ShinobiError):
                # refused before any step (no image, an engine away): nothing ran and
                # nothing was recorded, and an empty folder listed as "crashed" misleads
                import shutil

                shutil.rmtree(session.run_dir, ignore_errors=True)
    if session.interrupted is not None:
        raise Interrupted(session.interrupted, result, session.undying)
    return result
