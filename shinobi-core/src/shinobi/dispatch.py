"""Running one step: a cab, an orchestration function, a pystep or a nested recipe.

This is where a node and its resolved values become an :class:`Invocation`,
where the backend is chosen (config < --backend < step < ctx.run), and where
a :class:`BackendRun` is wrangled into a :class:`StepResult`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from shinobi.backends.base import Backend, BackendRun, Invocation, PathUse
from shinobi.backends.guarded import run_backend
from shinobi.backends.spawn import user_code
from shinobi.backends.streams import MAX_CAPTURE, TAIL_CAPTURE, StreamLog
from shinobi.cache_limits import applied_limits, demanded_limits
from shinobi.errors import ShinobiError, did_you_mean, exception_line
from shinobi.exit_guard import ExitInValidator, describe_exit, exits_refused, validated
from shinobi.failures import (
    STEP_CODE_FAILURES,
    describe_failure,
    more_in_stderr,
    raised_line,
    traced,
    user_traceback,
)
from shinobi.interrupted_outputs import set_aside, unfinished
from shinobi.live_runs import live_stamp, runs_beside
from shinobi.outcome import result_of_run
from shinobi.plan import cab_of
from shinobi.steps.argv import (
    has_secret,
    masked,
    path_uses,
    render_argv,
    secret_inputs,
    secret_texts,
    shows_secret,
)
from shinobi.steps.outputs import (
    LogLines,
    collect_outputs,
    missing_output,
    optional_outputs,
    static_outputs,
    unmounted_text_paths,
    unseen_output,
    wrangle,
)
from shinobi.steps.result import StepResult
from shinobi.steps.types import field_values, output_problem
from shinobi.stop_window import undo_run
from shinobi.untouched_outputs import existing_outputs, harvested_before, untouched

if TYPE_CHECKING:
    from shinobi.graph import Node
    from shinobi.session import Session
    from shinobi.steps.cab import Cab
    from shinobi.steps.functions import StepContext
    from shinobi.untouched_outputs import Found

__all__ = ["build_invocation", "choose_backend", "invocation_for", "run_cab", "run_node"]


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


def build_invocation(
    session: Session,
    name: str,
    node: Node,
    cab: Cab,
    values: dict[str, Any],
    outputs: dict[str, Any],
) -> Invocation:
    """The invocation of ``cab`` with ``values``; ``outputs`` are its static outputs."""
    return invocation_for(
        session,
        name,
        node,
        cab,
        render_argv(cab, values, reveal=True),  # what the tool gets; records show the mask
        path_uses(cab, values, outputs, session.cwd),
    )


def invocation_for(
    session: Session,
    name: str,
    node: Node,
    cab: Cab,
    argv: list[str],
    paths: tuple[PathUse, ...],
) -> Invocation:
    """The invocation for an already-rendered argv (the dry run has one at hand)."""
    stdout_path, stderr_path = session.log_paths(name)
    return Invocation(
        step=name,
        argv=tuple(argv),
        cwd=session.cwd,
        env=cab.env,
        paths=paths,
        resources=node.resources,
        image=cab.image,
        venv=session.venv_of(node),
        run_id=session.run_id,
        stdout_path=stdout_path,
        stderr_path=stderr_path,
        scratch_dir=str(session.run_dir) if session.run_dir else None,
        stdout_capture=_capture(cab, "stdout"),
        stderr_capture=_capture(cab, "stderr"),
    )


def _unfinished_elsewhere(
    cab: Cab,
    invocation: Invocation,
    run: BackendRun,
    noted: dict[str, Found],
    started: float,
    session: Session,
) -> list[str]:
    """What a job on another host (a Slurm job) that was stopped, or failed, left
    half-written: warned about, never moved.

    Its outputs reach this host through a shared filesystem, so a stopped job's
    partial Measurement Set kept its product's name with no word of it. Moving
    it, as a stopped step's here is (:func:`set_aside`), would trust timestamps
    written by another host's clock to tell the user's links and files from the
    job's; a warning only needs them to say "may be". Nothing is said while the
    engine has not confirmed the job gone: it may still be writing (the run's
    last line names it).
    """
    if run.undying or run.details.get("still_running"):
        return []
    ended = "was stopped" if run.cancelled else "failed"
    return unfinished(invocation.paths, cab.passthroughs(), noted, started, session.products, ended)


def _whole(text: str, log: str | None) -> str | LogLines:
    """What the wranglers read of a stream: ``text``, what the run kept of it, or,
    when the tool printed more than that, its log, which has it all. Wrangled from
    the last 16 MiB alone, an error line printed before them passed a failed step
    as ok, and a result line printed before them read "no line matched"."""
    if log is None or len(text) < MAX_CAPTURE // 2:  # nearly every stream: all kept
        return text
    try:
        size = os.path.getsize(log)
    except OSError:
        return text
    return LogLines(log) if size > len(text.encode("utf-8", "surrogateescape")) else text


def _capture(cab: Cab, stream: str) -> int:
    """The bytes of ``stream`` the step's run keeps in memory: the whole (up to
    its cap) for the cab's wranglers to read, else the tail its result keeps. A
    tool that prints gigabytes would otherwise hold 16 MiB a stream in ninja for
    each step running, for nothing to read."""
    if any(w.stream in (stream, "both") for w in cab.wranglers):
        return MAX_CAPTURE
    return TAIL_CAPTURE


def run_cab(
    session: Session,
    name: str,
    node: Node,
    cab: Cab,
    values: dict[str, Any],
    backend_name: str,
    secrets: tuple[Any, ...] | None = None,
) -> StepResult:
    """Run ``cab`` once with ``values`` on ``backend_name`` and wrangle the result.

    ``secrets``: the step's, when :func:`run_node` has looked for them already
    (a ``ctx.run()`` of a function leaves them to be found here).
    """
    known = static_outputs(cab, name, values)
    invocation = build_invocation(session, name, node, cab, values, known)
    if secrets is None:
        secrets = step_secrets(session, values)
    # what the run shows and records: a secret input masked (the tool gets it)
    shown_argv = _shown_argv(cab, values, invocation, secrets) if secrets else list(invocation.argv)
    backend = session.backend(backend_name)
    try:
        for check in session.pre_run_checks:
            check(invocation)
    except ShinobiError as exc:  # e.g. a live process still writes an output
        return StepResult(name=name, status="failed", returncode=None, error=str(exc))
    cache = session.cache_for(cab, node) if session.use_cache else None
    key = None
    material: list[Any] | None = None
    if cache is not None:
        from shinobi.cache import changed_between, key_of
        from shinobi.file_digests import DigestStopped

        stopping = session.control.stopping
        hit: StepResult | None = None
        try:  # hashing a large input takes a while: a Ctrl-C must not wait for it
            material = cache.material(cab, invocation, backend_name, backend, stopping, known)
            key = None if material is None else key_of(material)
            if key and not session.refresh_cache:  # refreshing: run, and store anew
                demanded = demanded_limits(backend, invocation)
                hit = cache.lookup(key, name, session.cwd, stopping, demanded)
        except DigestStopped:  # the check below makes the step cancelled
            key = None
        if hit is not None:
            replayed, damaged = _validate_outputs(cab, hit.outputs)
            if damaged is None:  # an entry the outputs model refuses is a miss: run it
                hit.backend = backend_name
                hit.argv = shown_argv
                hit.outputs = replayed
                hit.secrets = secrets
                return hit
    if session.control.stopping():  # asked to stop while the key was worked out: not run
        return StepResult(name=name, status="cancelled", returncode=None, error="interrupted")
    shown = backend_name
    if backend_name == "venv" and not invocation.venv:
        shown = "native: no venv"  # what the venv backend does then (it has warned)
    venv = _venv_of(backend, invocation)
    session.emit_started(name, {"backend": shown, "argv": shown_argv, "venv": venv})
    elsewhere = backend.capabilities.remote
    before = existing_outputs(invocation.paths, elsewhere=elsewhere)
    # a cluster job's outputs as a step here notes them, to say what it left unfinished
    noted_here = existing_outputs(invocation.paths) if elsewhere else before
    stamp = live_stamp(session.live_marker) if key is not None else None
    started = time.time()
    run = run_backend(backend, invocation, session.control, backend_name)
    finished = time.time()
    wrangled = wrangle(
        cab,
        _whole(run.stdout, invocation.stdout_path),
        _whole(run.stderr, invocation.stderr_path),
    )
    warnings = list(wrangled.warnings)
    if run.cancelled and not elsewhere:
        asides = set_aside(invocation.paths, cab.passthroughs(), before, started, session.products)
        warnings += [a.warning() for a in asides]
    error = describe_failure(run)
    if elsewhere and (run.cancelled or error is not None):
        warnings += _unfinished_elsewhere(cab, invocation, run, noted_here, started, session)
    elif error is not None and not run.cancelled:  # a successful step pays nothing
        warnings += unfinished(
            invocation.paths, cab.passthroughs(), before, started, session.products
        )
    outputs: dict[str, Any] = {}
    leftovers: list[str] = []
    if error is None:
        left_over = harvested_before(before, started, elsewhere=elsewhere) if before else None
        outputs, problems, leftovers = collect_outputs(
            cab, values, known, wrangled, session.cwd, left_over
        )
        warnings += leftovers
        unseen = unseen_output(cab.outputs_model, outputs, session.cwd, run.visible, backend_name)
        if wrangled.errors:
            error = f"the tool reported an error: {wrangled.errors[0]}"
        elif unseen is not None:  # before "did not create": it did, out of the host's sight
            error = unseen
        elif problems:
            error = problems[0]
        elif (unfilled := _unfilled_output(cab)) is not None and outputs.get(unfilled) is None:
            # run by an @step function (the graph refuses such a cab as a step of its own)
            error = f"{cab.unfilled_message(unfilled)}; or have the function return a result"
            error += " that gives it"
        else:
            outputs, error = _validate_outputs(cab, outputs)
    stale = untouched(before, started, elsewhere=elsewhere) if error is None and before else []
    for path in optional_outputs(cab, invocation.paths, stale).values() if stale else ():
        stale.remove(path)  # the step may make it or not: leaving it is no quiet failure
    warnings += [
        f"it exited 0 but did not rewrite its output {path!r}, which is as it was before"
        " the step started (a tool failing quietly? if the step may leave it so, declare"
        " that output optional); this result is not cached"
        for path in stale
    ]
    if error is not None and not run.cancelled:  # a successful step pays nothing
        warnings += unmounted_text_paths(
            cab.inputs_model, values, session.cwd, run.visible, backend_name, cab.text_paths()
        )
    result = result_of_run(
        name,
        run,
        invocation,
        backend_name,
        started,
        finished,
        outputs=outputs,
        error=error,
        warnings=warnings,
    )
    result.argv = shown_argv
    if secrets:  # before the cache keeps its output and warnings
        _mask_said(result, secrets)
    note_until_changed(session, name, node, result)
    echoed = bool(result.secrets) and _echoes_secret(result)
    if result.status == "ok" and session.cache is not None:  # see shinobi.cache_settle
        session.cache.writes.ran(invocation, replayable=cache is not None)
    if (
        cache is not None
        and key is not None
        and material is not None
        and result.status == "ok"
        and not (stale or leftovers or echoed or run.left_running)
    ):
        try:  # looked at again: what the tool read is what the key must say
            now = cache.material(cab, invocation, backend_name, backend, stopping, known)
            changed = changed_between(material, now)
        except DigestStopped:  # stopped meanwhile: the step stays done, only not stored
            changed = ""
        beside = runs_beside(session.live_marker, stamp, session.cwd) if changed is None else None
        if beside is not None:  # its product may be the other run's: said once for the run
            said = (
                f"another run of this workdir ({beside}) went on while steps of this run"
                " ran: a step of each that writes the same path takes the other's product"
                " for its own, so their results are not cached"
            )
            session.warn(said, once="runs-beside")
        elif changed is None:
            limits = applied_limits(backend, invocation)
            cache.store(key, result, invocation, cab, stopping, limits)
        elif changed:  # a later run with the old content would have been handed this result
            result.warnings.append(
                f"{changed} changed while the step ran: its result is not cached (it may"
                " not be what the content it started with gives)"
            )
    # A stop right after may take it back (see shinobi.stop_window): one signal can
    # reach a tool here and ninja together, but not a job on a cluster, which the
    # stop's own cancel records as cancelled, never as done. There an ok stands:
    # taken back, it ran again next time over its kept product (an appending
    # tool's doubled).
    if result.status == "ok" and not elsewhere:
        undo = functools.partial(
            undo_run,
            session,
            result,
            invocation,
            cab.passthroughs(),
            before,
            started,
        )
        session.recent.note(name, finished, undo, session.control.stop_requested_at)
    return result


def _unfilled_output(cab: Cab) -> str | None:
    """:meth:`Cab.unfilled_output`, worked out once per cab (every step of it asks,
    and it is a fact of the cab's declaration); kept in a tuple, as ``kept``
    keeps no None."""
    return cab.kept("_unfilled_output", lambda c: (c.unfilled_output(),))[0]


def _venv_of(backend: Backend, invocation: Invocation) -> str | None:
    """The venv the step runs in, for its record; the venv backend's module is
    imported only for a step that runs on it (a run of native steps never needs it)."""
    if backend.name != "venv":
        return None
    from shinobi.backends.venv import venv_ran_in

    return venv_ran_in(backend, invocation)


def note_until_changed(session: Session, name: str, node: Node, result: StepResult) -> None:
    """Record, for a step of a loop, whether its cycle's until file has changed since
    before the loop (see :mod:`shinobi.stale_until`); a cached result keeps its own."""
    if node.loop is None or result.status == "cached" or "until_changed" in result.details:
        return
    from shinobi.stale_until import until_changed

    prefix = name[: len(name) - len(node.name)]  # a nested recipe's path
    noted = session.until_before.get(f"{prefix}{node.loop}", {})
    changed = until_changed(noted.get(node.iteration or 0))
    if changed is not None:
        result.details["until_changed"] = changed


def _validate_outputs(cab: Cab, outputs: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    try:
        made = validated(cab.outputs_model.model_validate, outputs, by_name=True)
        return field_values(made), None
    except ExitInValidator as exc:
        return outputs, f"validating its outputs raised {exception_line(exc)}"
    except Exception as exc:
        said = output_problem(exc)
        if said is None:
            raise
        return outputs, said


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
        result.outputs, error = _validate_outputs(cab, dict(result.outputs))
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
    if secrets:  # any step's own Python may quote them (and a refused cab's error)
        _mask_said(result, secrets)
    if result.status == "failed" and session.control.stopped_before(result.finished):
        result = _stopped_by_interrupt(result)
    if result.ok:  # what it made (or the cache gave): a stopped step's glob leaves it alone
        session.note_products(result.outputs)
    return result


def step_secrets(session: Session, values: dict[str, Any]) -> tuple[Any, ...]:
    """A step's secrets: its secret inputs, and those of the run's earlier steps
    whose text one of its inputs holds as a plain value (a tool upstream echoed
    it into an output, which the step gets as it is: it must show it masked,
    and not cache it, too). Nothing, for one look at each input, in a run
    without secrets."""
    found = secret_inputs(values)
    if found:
        session.note_secrets(found)
    others = [secret for secret in session.secrets if secret not in found]
    if not others:  # the fast path: a run without secrets, or with only the step's own
        return found
    plain = list(values.values())
    return found + tuple(s for s in others if shows_secret(plain, secret_texts((s,))))


def _shown_argv(
    cab: Cab, values: dict[str, Any], invocation: Invocation, secrets: tuple[Any, ...]
) -> list[str]:
    """The step's command line as the run shows and records it: each secret
    input masked, and the text of any other secret it was given (see
    :func:`step_secrets`)."""
    argv = render_argv(cab, values) if has_secret(values) else list(invocation.argv)
    shown: list[str] = masked(argv, secret_texts(secrets))
    return shown


def _mask_said(result: StepResult, secrets: tuple[Any, ...]) -> None:
    """Mask the step's secret inputs in what ninja words from the tool's output
    (its error, its warnings) and in the output the result holds (the tail a
    failed run prints): shown in progress, kept in ``--json``, the manifest and
    the step cache. Done for a cab's run (a ``ctx.run()`` too) and again for any
    step, whose own Python may word an error from them. The step's log files
    stay as the tool wrote them. Its outputs keep the value (the next step
    needs it): the result notes its secrets, which whatever shows or keeps
    the outputs masks (:func:`~shinobi.steps.result.shown_outputs`)."""
    result.secrets += tuple(s for s in secrets if s not in result.secrets)
    texts = secret_texts(secrets)
    if result.error:
        result.error = masked(result.error, texts)
    if result.warnings:
        result.warnings = masked(result.warnings, texts)
    if result.stdout or result.stderr:
        result.stdout, result.stderr = masked([result.stdout, result.stderr], texts)


def _echoes_secret(result: StepResult) -> bool:
    """Whether a step's outputs hold the text of one of its secret inputs (a tool
    that echoed it, read by a wrangler): such a result is not cached, since an
    entry would keep the secret in a cache directory others may read, and a
    masked one would hand the mask to the steps downstream."""
    return shows_secret(result.outputs, secret_texts(result.secrets))


def _stopped_by_interrupt(result: StepResult) -> StepResult:
    """A step that failed after the run was asked to stop: Python code that ran on
    (an orchestration function whose ``ctx.run()`` came back cancelled, a pystep
    whose subprocess died of the same Ctrl-C) failed because of the stop, so it
    is cancelled, and the run's error does not blame it as having failed first."""
    error = f"interrupted; it then failed: {result.error}" if result.error else "interrupted"
    return dataclasses.replace(result, status="cancelled", error=error)


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
