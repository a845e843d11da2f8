"""One cab step's run, in the phases a run at one worker overlaps.

A cab runs in four phases: prepared (its invocation built; for a backend that
can start a tool at once, its process's pipes and environment made ready),
begun (the live-writer checks and the step cache, which may answer without
running it), waited on (its tool ran and ended) and completed (its outputs
collected and judged, its result stored in the cache). :func:`run_cab` runs
them back to back. The scheduler, at one worker, prepares the next step while
a tool runs and judges a tool's outcome while the next one runs (see
:mod:`shinobi.scheduler`), so what ninja does between two tools costs
almost nothing: a recipe of many short tools runs nearly as fast as the
tools alone.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shinobi.backends.base import Backend, BackendRun, Invocation, PathUse, PreparedRun, StartedRun
from shinobi.cache_limits import applied_limits, demanded_limits
from shinobi.errors import ShinobiError
from shinobi.failures import describe_failure
from shinobi.interrupted_outputs import set_aside
from shinobi.outcome import result_of_run
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
    WrangledOutput,
    collect_outputs,
    optional_outputs,
    static_outputs,
    unseen_output,
    wrangle,
)
from shinobi.steps.result import StepResult
from shinobi.steps.types import field_values, output_problem
from shinobi.stop_window import undo_run
from shinobi.untouched_outputs import existing_outputs, untouched

if TYPE_CHECKING:
    from shinobi.cache import StepCache
    from shinobi.graph import Node
    from shinobi.session import Session
    from shinobi.steps.cab import Cab

__all__ = [
    "CabRun",
    "build_invocation",
    "invocation_for",
    "mask_said",
    "prepare_cab",
    "run_cab",
    "step_outcome",
    "step_secrets",
    "validate_outputs",
]


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
    )


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

    ``secrets``: the step's, when :func:`shinobi.dispatch.run_node` has looked
    for them already (a ``ctx.run()`` of a function leaves them to be found here).
    """
    run = prepare_cab(session, name, node, cab, values, backend_name, secrets)
    said = run.begin()
    if said is not None:
        return said
    run.announce()
    run.start()
    run.wait()
    return run.complete()


def prepare_cab(
    session: Session,
    name: str,
    node: Node,
    cab: Cab,
    values: dict[str, Any],
    backend_name: str,
    secrets: tuple[Any, ...] | None = None,
    *,
    early: bool = False,
) -> CabRun:
    """The run of ``cab`` with its invocation built: nothing checked, nothing started.

    ``early``: also have the backend make the tool's process ready (see
    :meth:`shinobi.backends.base.Backend.prepare_run`), so :meth:`CabRun.start`
    only spawns it. Such a run must be started or discarded.
    """
    known = static_outputs(cab, name, values)
    invocation = build_invocation(session, name, node, cab, values, known)
    if secrets is None:
        secrets = step_secrets(session, values)
    # what the run shows and records: a secret input masked (the tool gets it)
    shown_argv = _shown_argv(cab, values, invocation, secrets) if secrets else list(invocation.argv)
    backend = session.backend(backend_name)
    run = CabRun(
        session,
        name,
        node,
        cab,
        values,
        backend_name,
        backend,
        secrets,
        known,
        invocation,
        shown_argv,
    )
    if early:
        run.keyed()
        run.prepared = backend.prepare_run(invocation, session.control)
    return run


@dataclass(eq=False)
class CabRun:
    """One cab step on its way through the phases (see the module docstring)."""

    session: Session
    name: str
    node: Node
    cab: Cab
    values: dict[str, Any]
    backend_name: str
    backend: Backend
    secrets: tuple[Any, ...]
    known: dict[str, Any]
    invocation: Invocation
    shown_argv: list[str]
    #: The tool's process made ready by the backend (None: it runs in :meth:`wait`).
    prepared: PreparedRun | None = None
    handle: StartedRun | None = None
    cache: StepCache | None = None
    key: str | None = None
    keyed_yet: bool = False
    before: dict[str, Any] = dataclasses.field(default_factory=dict)
    started: float = 0.0
    finished: float = 0.0
    run: BackendRun | None = None

    @property
    def elsewhere(self) -> bool:
        return self.backend.capabilities.remote

    def begin(self) -> StepResult | None:
        """The checks before the tool may start, and the step cache: the step's
        result where it does not run (refused, replayed, the run stopping)."""
        session, invocation = self.session, self.invocation
        try:
            for check in session.pre_run_checks:
                check(invocation)
        except ShinobiError as exc:  # e.g. a live process still writes an output
            self.discard()
            return StepResult(name=self.name, status="failed", returncode=None, error=str(exc))
        hit = self._cached()
        if hit is not None:
            self.discard()
            return hit
        if session.control.stopping():  # asked to stop while the key was worked out: not run
            self.discard()
            return StepResult(
                name=self.name, status="cancelled", returncode=None, error="interrupted"
            )
        return None

    def keyed(self) -> None:
        """Work out the step's cache key, once (hashing its inputs): before it
        begins, or ahead, while the tool before it runs."""
        if self.keyed_yet:
            return
        self.keyed_yet = True
        session = self.session
        self.cache = cache = session.cache_for(self.cab, self.node) if session.use_cache else None
        if cache is None:
            return
        from shinobi.file_digests import DigestStopped

        try:  # hashing a large input takes a while: a Ctrl-C must not wait for it
            stopping = session.control.stopping
            self.key = cache.key(
                self.cab, self.invocation, self.backend_name, self.backend, stopping
            )
        except DigestStopped:  # the stopping check in begin() makes the step cancelled
            self.key = None

    def shares_key(self, other: CabRun) -> bool:
        """Whether ``other``'s result, once stored, would be this step's cache entry."""
        return self.key is not None and self.key == other.key

    def _cached(self) -> StepResult | None:
        """The cache's result for this step, replayed; None: it runs (and may be stored)."""
        self.keyed()
        session, cache, key = self.session, self.cache, self.key
        if cache is None or not key or session.refresh_cache:  # refreshing: run, store anew
            return None
        from shinobi.file_digests import DigestStopped

        stopping = session.control.stopping
        try:
            demanded = demanded_limits(self.backend, self.invocation)
            hit = cache.lookup(key, self.name, session.cwd, stopping, demanded)
        except DigestStopped:  # the stopping check in begin() makes the step cancelled
            self.key = None
            return None
        if hit is None:
            return None
        replayed, damaged = validate_outputs(self.cab, hit.outputs)
        if damaged is not None:  # an entry the outputs model refuses is a miss: run it
            return None
        hit.backend = self.backend_name
        hit.argv = self.shown_argv
        hit.outputs = replayed
        hit.secrets = self.secrets
        return hit

    def announce(self) -> None:
        """Say the step has started (the progress line, the records)."""
        shown = self.backend_name
        if self.backend_name == "venv" and not self.invocation.venv:
            shown = "native: no venv"  # what the venv backend does then (it has warned)
        venv = _venv_of(self.backend, self.invocation)
        self.session.emit_started(
            self.name, {"backend": shown, "argv": self.shown_argv, "venv": venv}
        )

    def start(self) -> None:
        """Start the tool, where the backend prepared it (else :meth:`wait` runs it)."""
        self.before = existing_outputs(self.invocation.paths, elsewhere=self.elsewhere)
        self.started = time.time()
        if self.prepared is not None:
            self.handle = self.prepared.start()

    def wait(self) -> BackendRun:
        """Block until the tool has ended; what the backend reports of its run."""
        if self.handle is not None:
            run = self.handle.wait()
        else:
            run = self.backend.run(self.invocation, self.session.control)
        self.finished = time.time()
        self.run = run
        return run

    def discard(self) -> None:
        """Give back a prepared process that will never start."""
        if self.prepared is not None and self.handle is None:
            self.prepared.discard()
            self.prepared = None

    def outcome(self) -> StepResult:
        """The step's result, as the run records it (see :func:`step_outcome`)."""
        return self.recorded(self.complete())

    def recorded(self, result: StepResult) -> StepResult:
        """``result`` as the run records a step's (see :func:`step_outcome`)."""
        return step_outcome(self.session, result, self.secrets)

    def complete(self) -> StepResult:
        """The step's result from its tool's run: outputs collected and checked,
        the result stored in the cache."""
        session, name, cab = self.session, self.name, self.cab
        run, invocation, elsewhere = self.run, self.invocation, self.elsewhere
        assert run is not None, "complete() before wait()"
        before, started, finished = self.before, self.started, self.finished
        wrangled = wrangle(cab, run.stdout, run.stderr)
        warnings = list(wrangled.warnings)
        if run.cancelled and not elsewhere:
            asides = set_aside(
                invocation.paths, cab.passthroughs(), before, started, session.products
            )
            warnings += [a.warning() for a in asides]
        error = describe_failure(run)
        outputs: dict[str, Any] = {}
        if error is None:
            outputs, error = _judged_outputs(self, wrangled, run.visible)
        stale = untouched(before, started, elsewhere=elsewhere) if error is None and before else []
        for path in optional_outputs(cab, invocation.paths, stale).values() if stale else ():
            stale.remove(path)  # the step may make it or not: leaving it is no quiet failure
        warnings += [
            f"it exited 0 but did not rewrite its output {path!r}, which is as it was before"
            " the step started (a tool failing quietly? if the step may leave it so, declare"
            " that output optional); this result is not cached"
            for path in stale
        ]
        result = result_of_run(
            name,
            run,
            invocation,
            self.backend_name,
            started,
            finished,
            outputs=outputs,
            error=error,
            warnings=warnings,
        )
        result.argv = self.shown_argv
        if self.secrets:  # before the cache keeps its output and warnings
            mask_said(result, self.secrets)
        note_until_changed(session, name, self.node, result)
        echoed = bool(result.secrets) and _echoes_secret(result)
        cache, key = self.cache, self.key
        if (
            cache is not None
            and key is not None
            and result.status == "ok"
            and not (stale or echoed or run.left_running)
        ):
            limits = applied_limits(self.backend, invocation)
            cache.store(key, result, invocation, cab, session.control.stopping, limits)
        if result.status == "ok":  # a stop right after may take it back (see shinobi.stop_window)
            undo = functools.partial(
                undo_run,
                session,
                result,
                invocation,
                cab.passthroughs(),
                before,
                started,
                not elsewhere,
            )
            session.recent.note(name, finished, undo, session.control.stop_requested_at)
        return result


def _judged_outputs(
    run: CabRun, wrangled: WrangledOutput, visible: tuple[str, ...] | None
) -> tuple[dict[str, Any], str | None]:
    """The outputs of a tool that ended well, and the first reason they fail the step."""
    cab, cwd = run.cab, run.session.cwd
    outputs, problems = collect_outputs(cab, run.values, run.known, wrangled, cwd)
    unseen = unseen_output(cab.outputs_model, outputs, cwd, visible, run.backend_name)
    if wrangled.errors:
        return outputs, f"the tool reported an error: {wrangled.errors[0]}"
    if unseen is not None:  # before "did not create": it did, out of the host's sight
        return outputs, unseen
    if problems:
        return outputs, problems[0]
    unfilled = _unfilled_output(cab)
    if unfilled is not None and outputs.get(unfilled) is None:
        # run by an @step function (the graph refuses such a cab as a step of its own)
        error = f"{cab.unfilled_message(unfilled)}; or have the function return a result"
        return outputs, error + " that gives it"
    return validate_outputs(cab, outputs)


def step_outcome(session: Session, result: StepResult, secrets: tuple[Any, ...]) -> StepResult:
    """A step's result as the run records it, whatever kind of step made it: its
    secrets masked in what it says, a failure after a stop counted as the stop's,
    what it made noted as the run's products."""
    if secrets:  # any step's own Python may quote them (and a refused cab's error)
        mask_said(result, secrets)
    if result.status == "failed" and session.control.stopped_before(result.finished):
        result = _stopped_by_interrupt(result)
    if result.ok:  # what it made (or the cache gave): a stopped step's glob leaves it alone
        session.note_products(result.outputs)
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


def validate_outputs(cab: Cab, outputs: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    try:
        return field_values(cab.outputs_model.model_validate(outputs, by_name=True)), None
    except Exception as exc:
        said = output_problem(exc)
        if said is None:
            raise
        return outputs, said


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


def mask_said(result: StepResult, secrets: tuple[Any, ...]) -> None:
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
