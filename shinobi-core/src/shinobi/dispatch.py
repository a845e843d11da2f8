"""Running one step: a cab, an orchestration function, a pystep or a nested recipe.

This is where a node and its resolved values become an :class:`Invocation`,
where the backend is chosen (config < --backend < step < ctx.run), and where
a :class:`BackendRun` is wrangled into a :class:`StepResult`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from shinobi.backends.spawn import user_code
from shinobi.backends.streams import StreamLog
from shinobi.cab_run import (
    CabRun,
    build_invocation,
    invocation_for,
    prepare_cab,
    run_cab,
    step_outcome,
    step_secrets,
    validate_outputs,
)
from shinobi.errors import ShinobiError, did_you_mean
from shinobi.exit_guard import describe_exit, exits_refused
from shinobi.failures import (
    STEP_CODE_FAILURES,
    more_in_stderr,
    raised_line,
    traced,
    user_traceback,
)
from shinobi.plan import cab_of
from shinobi.steps.outputs import missing_output
from shinobi.steps.result import StepResult

if TYPE_CHECKING:
    from shinobi.graph import Node
    from shinobi.session import Session
    from shinobi.steps.cab import Cab
    from shinobi.steps.functions import StepContext

__all__ = [
    "build_invocation",
    "choose_backend",
    "invocation_for",
    "prepare_node",
    "run_cab",
    "run_node",
]


def choose_backend(session: Session, node: Node, override: str | None = None) -> str:
    """ctx.run(backend=) > the step's own backend= > --backend > config default.

    A step that declares a venv (``venv=``) but no backend of its own is asking
    to run in that venv: where the run's backend is native, it gets ``venv``,
    and so it does where the run's backend runs images and the step names
    none (a recipe mixing image steps and venv steps runs under ``--backend
    docker``; the venv step was refused for want of an image, or a pystep ran
    in ninja's own Python, its venv ignored).
    """
    chosen = override or node.backend or session.default_backend
    if not node.venv or override or node.backend:
        if node.venv and chosen == "native":
            _warn_venv_ignored(session, node)
        return chosen
    if chosen == "native":
        return "venv"
    if getattr(node.step, "image", None) is None and _runs_images(session, chosen):
        session.warn(
            f"step {node.name!r} names no image but a venv, so it runs in its venv rather"
            f" than in a {chosen} container",
            once=f"venv-not-image:{id(node)}",  # a nested recipe may hold another of that name
        )
        return "venv"
    return chosen


def _warn_venv_ignored(session: Session, node: Node) -> None:
    """Say that a step naming both a venv and the native backend runs without the venv.

    Native runs the command as written, in ninja's environment: the step then
    failed with ``ModuleNotFoundError`` or "command not found" and nothing
    said why, where slurm and the container backends say they drop the venv.
    """
    session.warn(
        f"step {node.name!r} declares venv={node.venv!r} but backend 'native', so the venv"
        " is ignored: the step runs without it (leave backend= out to run it in its venv)",
        once=f"venv-ignored:{id(node)}",  # a nested recipe may hold another of that name
    )


def _runs_images(session: Session, backend_name: str) -> bool:
    try:
        return bool(session.backend(backend_name).capabilities.images)
    except ShinobiError:  # not installed: the run says so where it picks the backend
        return False


def _run_function(session: Session, name: str, node: Node, values: dict[str, Any]) -> StepResult:
    from shinobi.steps.functions import StepContext

    cab = cab_of(node.step)
    fields = cab.inputs_model.model_fields

    def runner(vals: dict[str, Any], backend: str | None) -> StepResult:
        from shinobi.errors import CallRefused
        from shinobi.plan import validate_inputs

        for key in vals:  # a misspelt override would otherwise be dropped by validation
            if key not in fields:
                raise CallRefused(
                    f"ctx.run(): {cab.name!r} has no input {key!r}{did_you_mean(key, fields)}"
                )
        try:
            checked = validate_inputs(node, vals, f"step {name!r}")
        except ValueError as exc:
            raise CallRefused(f"ctx.run(): {exc}") from None
        return run_cab(session, name, node, cab, checked, choose_backend(session, node, backend))

    ctx = StepContext(name, values, runner)
    why = (
        f"step {name!r} is an orchestration function: its own Python runs inside ninja"
        " and cannot be stopped, so ninja waits for it to return (the tools it runs are"
        " stopped, and it can start no more)"
    )
    # said now, not at its first ctx.run(): Python before it may take a while
    started = time.time()
    session.emit_started(name, {"backend": "function"})
    with session.python_inside(name, why):
        made = _call_function(session, name, node, cab, ctx, runner, values)
    # the step took the function's time, not that of the ctx.run() it returned
    # (a copy: the function may keep the results it was given)
    result = dataclasses.replace(made, started=started, finished=time.time())
    result.details = dict(made.details)
    result.warnings = _every_warning(made, ctx.results)
    for call in ctx.results:  # what its ctx.run() calls were given: its outputs may hold it
        result.secrets += tuple(s for s in call.secrets if s not in result.secrets)
    if session.control.cancelled.is_set():  # it ran on after the stop: not torn down
        result.details["ran_on"] = True
    return result


def _every_warning(made: StepResult, calls: list[StepResult]) -> list[str]:
    """The warnings of the step's result and of every ``ctx.run()`` it made, each
    once: the step's result is one call's (or the function's own), and an earlier
    call's warning (its partial output set aside as ``.interrupted``) is the step's too."""
    return list(dict.fromkeys([w for call in calls for w in call.warnings] + made.warnings))


def _call_function(
    session: Session,
    name: str,
    node: Node,
    cab: Cab,
    ctx: StepContext,
    runner: Callable[[dict[str, Any], str | None], StepResult],
    values: dict[str, Any],
) -> StepResult:
    """The orchestration function's call, and the step result it makes (its
    times are the caller's: from the function's start to its end)."""
    try:
        # user_code: steps started meanwhile get Popen (see shinobi.backends.spawn)
        with user_code(), exits_refused():
            returned = node.step(ctx)
    except STEP_CODE_FAILURES as exc:
        said = (
            describe_exit(exc)
            if isinstance(exc, SystemExit)
            else f"raised {raised_line(exc, traced(exc))}"
        )
        return StepResult(
            name=name,
            status="failed",
            returncode=None,
            error=f"the orchestration function {said}",
            stderr=_whole_message(session, name, exc),
        )
    if isinstance(returned, StepResult):
        if any(returned is made for made in ctx.results):
            return returned
        return _made_by_function(name, cab, returned, session.cwd)
    if ctx.results:
        return ctx.results[-1]
    return runner(values, None)


def _whole_message(session: Session, name: str, exc: BaseException) -> str:
    """The traceback of what the orchestration function raised (its whole
    message with it), added to the step's stderr log after what its
    ``ctx.run()`` calls wrote, and returned for its result; nothing for a
    ``sys.exit()``, whose one line says it all."""
    if isinstance(exc, SystemExit):
        return ""
    text = str(exc).strip()
    if not traced(exc) and not more_in_stderr(text):
        return ""  # ninja's own one-line refusal: the error says it all
    whole = user_traceback(exc) if traced(exc) else f"{text}\n"
    _, stderr_path = session.log_paths(name)
    log = StreamLog(stderr_path, session.warn)  # appends; a failed write is warned about
    log.write(whole.encode("utf-8", "backslashreplace"))
    log.close()
    return whole


#: What a result an orchestration function builds itself may say it is ("cached":
#: one made from what ctx.run() returned, which the cache served).
_MADE_STATUSES = ("ok", "cached", "failed", "skipped")


def _made_by_function(name: str, cab: Cab, made: StepResult, cwd: str) -> StepResult:
    """A result the orchestration function built itself, held to what ``ctx.run``'s are.

    It is the step's result whatever name it was given; a failed one says why,
    and a successful or skipped one's outputs must satisfy the cab's outputs
    model, its paths there, as the cab's own would (a skipped step's
    dependants and the recipe's outputs still take them: a missing one was
    blamed on the recipe's outputs model, far from the function that left it out).
    """
    result = dataclasses.replace(made, name=name, details=dict(made.details))
    error = None
    if result.status not in _MADE_STATUSES:
        error = (
            f"status {result.status!r}, which is none of {', '.join(_MADE_STATUSES)} (or return"
            " what ctx.run() returned)"
        )
    elif result.status == "failed" and not result.error:
        result.error = "the orchestration function returned a failed result without an error"
    elif result.status in ("ok", "cached", "skipped"):  # skipped: its dependants still run
        result.outputs, error = validate_outputs(cab, dict(result.outputs))
        error = error or missing_output(cab.outputs_model, result.outputs, cwd)
    if error is not None:
        result.status = "failed"
        result.error = f"the orchestration function returned a result whose {error}"
    return result


def run_node(session: Session, name: str, node: Node, values: dict[str, Any]) -> StepResult:
    """Run one node (or one slice of a scattered node) with its resolved inputs."""
    # a cab's are looked for once, before it runs; other kinds' after, once the
    # steps inside them have noted theirs
    secrets = step_secrets(session, values) if node.kind == "cab" else None
    result = _run_kind(session, name, node, values, secrets)
    if secrets is None:
        secrets = step_secrets(session, values)
    return step_outcome(session, result, secrets)


def prepare_node(
    session: Session, name: str, node: Node, values: dict[str, Any]
) -> StepResult | CabRun:
    """A cab step prepared to start at once (see :mod:`shinobi.cab_run`), or any
    other step run through (its result, as :func:`run_node` gives it)."""
    if node.kind != "cab":
        return run_node(session, name, node, values)
    secrets = step_secrets(session, values)
    backend = choose_backend(session, node)
    return prepare_cab(session, name, node, node.step, values, backend, secrets, early=True)


def _run_kind(
    session: Session,
    name: str,
    node: Node,
    values: dict[str, Any],
    secrets: tuple[Any, ...] | None,
) -> StepResult:
    """:func:`run_node` by the kind of node: a cab, a function, a pystep, a recipe."""
    kind = node.kind
    if kind == "cab":
        backend = choose_backend(session, node)
        return run_cab(session, name, node, node.step, values, backend, secrets)
    if kind == "function":
        return _run_function(session, name, node, values)
    if kind == "python":
        from shinobi.pystep_runner import run_pystep

        return run_pystep(session, name, node, values, choose_backend(session, node))
    if kind == "recipe":
        from shinobi.scheduler import run_graph

        assert node.subgraph is not None
        started = time.time()
        inner = run_graph(node.subgraph, values, session, prefix=f"{name}.")
        return StepResult(
            name=name,
            status=inner.status,
            outputs=inner.outputs,
            returncode=inner.returncode,
            stdout=inner.stdout,
            stderr=inner.stderr,
            error=(
                f"step {inner.failed_step!r} failed: {inner.error}"
                if inner.error and inner.failed_step and inner.status == "failed"
                else inner.error
            ),
            started=started,
            finished=time.time(),
            details={"steps": inner.steps},
        )
    raise TypeError(f"step {name!r}: cannot run a {kind!r} step")
