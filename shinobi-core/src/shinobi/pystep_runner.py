"""Running a @pystep: in this process, or in another interpreter through a backend.

Where a pystep runs follows from its resolved backend:

* ``venv`` with a venv declared (the step's ``venv=`` or ``backend.venv``):
  under the venv's own interpreter, importing the venv's real packages;
* a container runtime (a backend whose capabilities include images) and the
  pystep names an ``image=``: inside that image;
* anything else (native, a venv backend with no venv, a container runtime
  but no image, a cluster backend): in this process, as a function call.

Out of process, the step is an ordinary :class:`Invocation`
(``python3 BOOT SPEC.json``, see :mod:`shinobi.pyrunner.request`) that
the backend runs like any tool: the inputs cross as JSON in a per-step
workspace, the runner (:mod:`shinobi.pyrunner.runner`) writes the outputs
back there, and the workspace is removed only once the backend has returned
(its teardown done), and never while the backend reports a process that
would not die.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from shinobi.backends.base import BackendRun, Invocation
from shinobi.backends.guarded import run_backend
from shinobi.backends.spawn import user_code
from shinobi.backends.streams import TAIL_CAPTURE, StreamLog
from shinobi.backends.venv import installer, no_venv_warning, venv_ran_in
from shinobi.exit_guard import ExitInValidator, describe_exit, exits_refused, validated
from shinobi.failures import (
    STEP_CODE_FAILURES,
    describe_failure,
    more_in_stderr,
    raised_line,
    traced,
    user_traceback,
)
from shinobi.graph import same_shape
from shinobi.outcome import result_of_run
from shinobi.pyrunner.request import build_invocation
from shinobi.pystep_output import captured
from shinobi.step_names import unsliced
from shinobi.steps.argv import masked, secret_texts, secrets_within
from shinobi.steps.outputs import missing_output, unmounted_text_paths, unseen_output
from shinobi.steps.result import StepResult, kept_tail
from shinobi.steps.types import (
    error_field,
    field_values,
    fields_of,
    output_problem,
    validation_errors,
)
from shinobi.teardown import StepWorkspace

if TYPE_CHECKING:
    from shinobi.graph import Node
    from shinobi.session import Session

__all__ = ["placement", "run_pystep"]


def placement(session: Session, name: str, node: Node, backend_name: str) -> str | None:
    """The backend that runs this pystep out of process, or None to call it here.

    What it warns of, it says once per step: a scatter's thousand slices are one
    line, as the same warnings of cab slices are."""
    step = node.step
    whole = unsliced(name)
    if backend_name == "venv":
        if session.venv_of(node):
            return backend_name
        session.warn(no_venv_warning([whole], {whole}), once=f"pystep-no-venv:{whole}")
        return None
    if backend_name == "native":
        return None
    if session.backend(backend_name).capabilities.images:
        if step.image:
            return backend_name
        session.warn(
            f"pystep {whole!r} names no image=, so it runs in this process rather than in a"
            f" {backend_name} container",
            once=f"pystep-no-image:{whole}",
        )
        return None
    # A batch system or a remote host runs commands: the function stays here.
    session.warn(
        f"pystep {whole!r} runs in this process, on this host, not through the"
        f" {backend_name} backend, which runs commands only (to run it there, make it a"
        " script and give it a Cab)",
        once=f"pystep-here:{whole}",
    )
    return None


def run_pystep(
    session: Session, name: str, node: Node, values: dict[str, Any], backend_name: str
) -> StepResult:
    """Run the pystep of ``node`` with its validated inputs ``values``."""
    elsewhere = placement(session, name, node, backend_name)
    if elsewhere is None:
        result = _run_here(session, name, node, values)
    else:
        result = _run_elsewhere(session, name, node, values, elsewhere)
    if result.ok:  # a path it returned but never made fails it, not the step that reads it
        step = node.step
        missing = missing_output(
            step.outputs_model, result.outputs, session.cwd, step.required_outputs()
        )
        if missing is not None:
            result.status = "failed"
            result.error = f"the pystep's {missing}"
    return result


def _run_here(session: Session, name: str, node: Node, values: dict[str, Any]) -> StepResult:
    """Call the pystep in this process.

    Python code running in one of ninja's threads cannot be stopped from
    outside: on an interrupt ninja says so at once, waits for the call to
    return, and the step's result says it ran on (``details["ran_on"]``), so
    the run's final message does not claim every step was torn down.

    What the call prints from its own thread goes to the step's logs and
    result, like a tool's output (see :mod:`shinobi.pystep_output`).
    """
    step = node.step
    session.emit_started(name, {"backend": "python"})
    started = time.time()

    why = (
        f"step {name!r} is Python running inside ninja and cannot be stopped; waiting for"
        " it to return (a pystep with venv= or image= runs in a process of its own, which"
        " can be)"
    )
    # What the function prints goes to the step's logs, as a tool's output does.
    stdout_path, stderr_path = session.log_paths(name)
    out = StreamLog(stdout_path, session.control.warn, TAIL_CAPTURE)  # for the result alone
    err = StreamLog(stderr_path, session.control.warn, TAIL_CAPTURE)
    in_call = True
    with session.python_inside(name, why):
        try:
            # user_code: steps started meanwhile get Popen (see shinobi.backends.spawn)
            here = os.getcwd()
            ticket = _ALONE.enter()
            try:
                with user_code(), exits_refused(), captured(out, err):
                    returned = step.fn(**_anchored(step, values, session.cwd))
            finally:
                moved = _moved_back(here) if _ALONE.leave(ticket) else None
            in_call = False
            if moved is not None:
                raise DirectoryMoved(moved)
            outputs = field_values(
                step.outputs_model.model_validate(step.outputs_from(returned), by_name=True)
            )
        except STEP_CODE_FAILURES as exc:
            # the function's own exception: where in the user's code, as a pystep in
            # a venv or an image shows it; a returned value that does not fit: why
            with_trace = in_call and traced(exc)
            # ninja writes these lines, not the function: a secret in them is masked
            # there as in the error line (what the function printed stays its own)
            hidden = secret_texts((*secrets_within(list(values.values())), *session.secrets))
            if with_trace:
                said = masked(user_traceback(exc), hidden)
                err.write(said.encode("utf-8", "backslashreplace"))
            elif "\n" in str(exc):  # the whole message, which the one-line error points to
                said = masked(f"{str(exc).rstrip()}\n", hidden)
                err.write(said.encode("utf-8", "backslashreplace"))
            misfit = None if in_call else output_problem(exc)
            if isinstance(exc, DirectoryMoved):
                error = (
                    f"the function changed ninja's working directory (to {exc}) and left it"
                    " so: an in-process pystep shares it with every step of the run, and its"
                    " outputs are looked for in the run's directory; change back before"
                    " returning (or use absolute paths), or give the step a venv= to run"
                    " in a process of its own"
                )
            elif misfit:
                error = f"{_FAILED_AT['outputs']} {misfit}"
            else:
                error = _raised(exc, with_trace) + _off_the_main_thread(exc)
            result = StepResult(
                name=name,
                status="failed",
                returncode=_exit_status(exc) if isinstance(exc, SystemExit) else None,
                error=error,
                stdout=kept_tail(out.text()),
                stderr=kept_tail(err.text()),
                backend="python",
                started=started,
                finished=time.time(),
            )
        else:
            result = StepResult(
                name=name,
                status="ok",
                outputs=outputs,
                stdout=kept_tail(out.text()),
                stderr=kept_tail(err.text()),
                backend="python",
                started=started,
                finished=time.time(),
            )
        finally:
            out.close()
            err.close()
    if session.control.cancelled.is_set():
        result.details["ran_on"] = True
    return result


class DirectoryMoved(Exception):
    """The function changed ninja's working directory and left it changed."""


class _Alone:
    """Whether an in-process call ran with no other beside it, start to end.

    The working directory is the process's: with two functions running at once
    (``max_workers`` 2, runs in threads) one that changed it for a moment and
    changed it back looked like the other leaving it changed, which was failed
    for it, and putting it back moved the first one's files elsewhere. Only a
    call that ran alone is told it moved the directory, and only then is it
    put back.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._started = 0

    def enter(self) -> tuple[int, bool]:
        with self._lock:
            self._running += 1
            self._started += 1
            return self._started, self._running == 1

    def leave(self, ticket: tuple[int, bool]) -> bool:
        """Whether the call ``ticket`` (from :meth:`enter`) ran alone throughout."""
        started, alone = ticket
        with self._lock:
            self._running -= 1
            return alone and self._started == started


_ALONE = _Alone()


def _moved_back(here: str) -> str | None:
    """Put the working directory back to ``here`` if the function changed it; what
    it had become (None when unchanged).

    A function runs in ninja's own process, whose directory every later step
    shares: one that did ``os.chdir("sub")`` sent the next in-process step's
    files there, while ninja looked for its outputs in the run's directory
    and took a stale file of the same name for the new one.
    """
    try:
        now = os.getcwd()
    except OSError:  # changed into a directory removed since
        now = "a directory removed since"
    if now == here:
        return None
    os.chdir(here)
    return now


#: How the runner's report of a failure begins, by where it failed: the function
#: may never have been called, and saying it raised would send the user to it.
_FAILED_AT = {
    "setup": "the Python step could not start:",
    "load": "importing the pystep's module raised",
    "call": "the pystep raised",
    "outputs": "the pystep returned what its return type refuses:",
    "json": "the pystep returned what cannot be sent back as JSON:",
}


def _exit_status(exc: SystemExit) -> int:
    """The exit code ``sys.exit()`` gives the step: as the same call gives a pystep
    in another interpreter (whose process can only end so), so one recipe gives
    one record; a failure is never 0, and a code beyond 255 is 1. The runner
    (``shinobi.pyrunner.runner``) keeps its own copy: it may meet an older shinobi."""
    return exc.code if isinstance(exc.code, int) and 0 < exc.code < 256 else 1


def _off_the_main_thread(exc: BaseException) -> str:
    """What to do about an exception only a call on a worker thread meets, or "".

    Python lets only the main thread install a signal handler (``signal.signal``,
    as a tool's wrapper or a library's start-up may call); a pystep in ninja's
    process runs on one of ninja's worker threads, where the same function
    works from a script and fails here.
    """
    if isinstance(exc, ValueError) and str(exc).endswith(
        "only works in main thread of the main interpreter"
    ):
        return (
            "; a pystep in ninja's process runs on a worker thread, where Python refuses"
            " this: give the step a venv= (a venv with Python 3.11 or newer) to run it as"
            " a process of its own"
        )
    return ""


def _raised(exc: BaseException, with_trace: bool) -> str:
    """What a step's exception says, on one line (the whole text goes to its stderr)."""
    if isinstance(exc, SystemExit):
        return describe_exit(exc)
    return raised_line(exc, with_trace)


def _anchored(step: Any, values: dict[str, Any], cwd: str) -> dict[str, Any]:
    """Relative path inputs made absolute against the run's directory.

    A call in this process resolves relative paths against ninja's own
    working directory, which need not be the run's (``run_recipe(cwd=...)``);
    a tool, or a pystep in another interpreter, runs in the run's directory.
    """
    if os.path.realpath(cwd) == os.path.realpath(os.getcwd()):
        return values
    anchored = dict(values)
    for field, spec in fields_of(step.inputs_model).items():
        value = values.get(field)
        if value is None:
            continue
        if spec.nested_paths:  # inside a mapping, a model, a dataclass...
            anchored[field] = _anchor_within(value, cwd, 0)
        elif spec.path_kind is None:
            continue
        elif isinstance(value, list | tuple):
            anchored[field] = same_shape(value, [_anchor(v, cwd) for v in value])
        else:
            anchored[field] = _anchor(value, cwd)
    return anchored


def _anchor(value: Any, cwd: str) -> Any:
    if isinstance(value, PurePath) and not value.is_absolute():
        return Path(cwd) / value
    return value


def _anchor_within(value: Any, cwd: str, depth: int) -> Any:
    """``value`` with every relative path inside it anchored, rebuilt in its own
    kind (a model copied, not changed: the caller's values stay as they were)."""
    import dataclasses

    if depth > 32 or isinstance(value, str | bytes):
        return value
    if isinstance(value, PurePath):
        return _anchor(value, cwd)
    inner = functools.partial(_anchor_within, cwd=cwd, depth=depth + 1)
    if isinstance(value, dict):
        return {key: inner(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return same_shape(value, [inner(item) for item in value])
    if isinstance(value, set | frozenset):
        return type(value)(inner(item) for item in value)
    if isinstance(getattr(type(value), "model_fields", None), dict):
        return value.model_copy(update={name: inner(item) for name, item in value})
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: inner(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    return value


def _run_elsewhere(
    session: Session, name: str, node: Node, values: dict[str, Any], backend_name: str
) -> StepResult:
    from shinobi.session import safe_name

    parent = str(session.run_dir / "pysteps") if session.run_dir is not None else None
    staged = StepWorkspace(parent, prefix=f"{safe_name(name)}-")
    workspace = Path(staged.path)
    run: BackendRun | None = None
    try:
        try:
            invocation = build_invocation(
                session, name, node, values, workspace, _installer_for(session, node, backend_name)
            )
        except (TypeError, ValueError) as exc:
            return StepResult(
                name=name,
                status="failed",
                returncode=None,
                error=f"its inputs cannot cross to another interpreter as JSON: {exc}",
                backend=backend_name,
            )
        backend = session.backend(backend_name)
        venv = venv_ran_in(backend, invocation)
        argv = list(invocation.argv)
        session.emit_started(name, {"backend": backend_name, "argv": argv, "venv": venv})
        started = time.time()
        run = run_backend(backend, invocation, session.control, backend_name)
        finished = time.time()
        result = _result(name, node, run, invocation, workspace, backend_name, started, finished)
        if result.status == "failed":  # a successful step pays nothing
            result.warnings += unmounted_text_paths(
                node.step.inputs_model, values, invocation.cwd, run.visible, backend_name
            )
        return result
    finally:
        # Teardown is over once run() has returned; a process that would not die
        # may still have the workspace open, so it is then left in place.
        staged.close(run.undying if run is not None else ())


def _installer_for(session: Session, node: Node, backend_name: str) -> str | None:
    """The command that installs into the pystep's venv, chosen by what the venv has
    (its pip, or uv's for a venv without one), for the runner's remedies; None
    elsewhere (an image's Python: ``pip install``)."""
    venv = session.venv_of(node) if backend_name == "venv" else None
    if not venv:
        return None
    return installer(os.path.normpath(os.path.join(session.cwd, os.path.expanduser(venv))))


def _result(
    name: str,
    node: Node,
    run: BackendRun,
    invocation: Invocation,
    workspace: Path,
    backend_name: str,
    started: float,
    finished: float,
) -> StepResult:
    reply = _read_reply(workspace / "outputs.json")
    outputs: dict[str, Any] = {}
    error = describe_failure(run)
    if "error" in reply:
        said = str(reply["error"]).strip()
        what = _FAILED_AT.get(str(reply.get("stage")), "the pystep raised")
        error = f"{what} {said.splitlines()[0] if said else '?'}{more_in_stderr(said)}"
        # "called sys.exit(5)", or what its value raised once returned, as in this process
        if reply.get("stage") in ("exit", "returned"):
            error = said
    elif error is None:
        if "outputs" not in reply:
            error = "the pystep runner exited without writing its outputs"
        else:
            try:
                model = node.step.outputs_model
                outputs = field_values(
                    validated(model.model_validate, reply["outputs"], by_name=True)
                )
            except (ValueError, ExitInValidator) as exc:
                errors = validation_errors(exc) or [{"msg": str(exc).splitlines()[0]}]
                error = (
                    f"its outputs do not match {node.step.outputs_model.__name__}:"
                    f" {error_field(errors[0]) or 'the model'}: {errors[0].get('msg')}"
                )
            else:  # said before run_pystep would call it missing: it was made, unseen
                unseen = unseen_output(
                    node.step.outputs_model, outputs, invocation.cwd, run.visible, backend_name
                )
                error = None if unseen is None else f"the pystep's {unseen}"
    result = result_of_run(
        name, run, invocation, backend_name, started, finished, outputs=outputs, error=error
    )
    if run.undying:
        result.details["workspace"] = str(workspace)
    return result


def _read_reply(path: Path) -> dict[str, Any]:
    try:
        reply = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return reply if isinstance(reply, dict) else {}
