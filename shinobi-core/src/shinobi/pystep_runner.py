"""Running a @pystep: in this process, or in another interpreter through a backend.

Where a pystep runs follows from its resolved backend:

* ``venv`` with a venv declared (the step's ``venv=`` or ``backend.venv``):
  under the venv's own interpreter, importing the venv's real packages;
* a container runtime (a backend whose capabilities include images) and the
  pystep names an ``image=``: inside that image;
* anything else (native, a venv backend with no venv, a container runtime
  but no image, a cluster backend): in this process, as a function call.

Out of process, the step is an ordinary :class:`Invocation`
(``python3 RUNNER SPEC.json``) that the backend runs like any tool: the
inputs cross as JSON in a per-step workspace, the runner writes the outputs
back there, and the workspace is removed only once the backend has returned
(its teardown done), and never while the backend reports a process that
would not die.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shinobi.backends.base import BackendRun, Invocation, PathKind, PathUse
from shinobi.failures import describe_failure
from shinobi.steps.result import StepResult
from shinobi.steps.types import fields_of

if TYPE_CHECKING:
    from shinobi.graph import Node
    from shinobi.session import Session
    from shinobi.steps.functions import PyStep

__all__ = ["core_paths", "placement", "run_pystep", "source_of"]

#: Distributions the runner needs besides the standard library.
_NEEDED = (
    "shinobi",
    "pydantic",
    "pydantic_core",
    "typing_extensions",
    "annotated_types",
    "typing_inspection",
)


def _locations() -> dict[str, str]:
    """Module name -> the import directory it is found in, for what the runner needs."""
    found: dict[str, str] = {}
    for name in _NEEDED:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        location = Path(spec.origin).parent
        if spec.submodule_search_locations is not None:  # a package: its parent is on the path
            location = location.parent
        found[name] = str(location)
    return found


def core_paths() -> list[str]:
    """The import directories holding this shinobi and its dependencies.

    The runner appends them to a foreign interpreter's path only when it
    lacks shinobi or pydantic.
    """
    return list(dict.fromkeys(_locations().values()))


def source_of(step: PyStep) -> tuple[str, str, str]:
    """(source file, module name, directory to import from) of a pystep's function."""
    fn = step.fn
    source = inspect.getsourcefile(fn) or fn.__code__.co_filename
    source = os.path.abspath(source)
    module = getattr(fn, "__module__", None) or "__shinobi_pystep__"
    root = os.path.dirname(source)
    parts = module.split(".")
    if os.path.basename(source) == "__init__.py":
        parts = [*parts, "__init__"]
    # For a module of a package (pkg/mod.py as "pkg.mod"), import from above the package.
    if len(parts) > 1 and Path(source).with_suffix("").parts[-len(parts) :] == tuple(parts):
        for _ in parts[1:]:
            root = os.path.dirname(root)
    else:
        module = module.rpartition(".")[2]
    return source, module, root


def placement(session: Session, name: str, node: Node, backend_name: str) -> str | None:
    """The backend that runs this pystep out of process, or None to call it here."""
    step = node.step
    if backend_name == "venv":
        if node.venv or session.config.backend.venv:
            return backend_name
        session.warn(
            f"step {name!r} selected the venv backend but no venv is declared (venv= on the"
            " pystep, or backend.venv); it runs in this process",
            once=f"pystep-no-venv:{name}",
        )
        return None
    if backend_name == "native":
        return None
    if session.backend(backend_name).capabilities.images:
        if step.image:
            return backend_name
        session.warn(
            f"pystep {name!r} names no image=, so it runs in this process rather than in a"
            f" {backend_name} container",
            once=f"pystep-no-image:{name}",
        )
    return None


def run_pystep(
    session: Session, name: str, node: Node, values: dict[str, Any], backend_name: str
) -> StepResult:
    """Run the pystep of ``node`` with its validated inputs ``values``."""
    elsewhere = placement(session, name, node, backend_name)
    if elsewhere is None:
        return _run_here(session, name, node, values)
    return _run_elsewhere(session, name, node, values, elsewhere)


def _run_here(session: Session, name: str, node: Node, values: dict[str, Any]) -> StepResult:
    step = node.step
    session.emit_started(name, {"backend": "python"})
    started = time.time()
    try:
        returned = step.fn(**values)
        outputs = dict(step.outputs_model.model_validate(step.outputs_from(returned)))
    except Exception as exc:
        return StepResult(
            name=name,
            status="failed",
            returncode=None,
            error=f"{type(exc).__name__}: {exc}",
            backend="python",
            started=started,
            finished=time.time(),
        )
    return StepResult(
        name=name,
        status="ok",
        outputs=outputs,
        backend="python",
        started=started,
        finished=time.time(),
    )


def _workspace(session: Session, name: str) -> Path:
    from shinobi.session import safe_name

    parent = session.run_dir / "pysteps" if session.run_dir is not None else None
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{safe_name(name)}-", dir=parent))


_KINDS: dict[str, PathKind] = {"file": "file", "dir": "dir", "ms": "dir", "any": "any"}


def _path_uses(step: PyStep, values: dict[str, Any], cwd: str) -> list[PathUse]:
    """The pystep's own path inputs, so a container sees (and may write) them."""
    uses: list[PathUse] = []
    for field, spec in fields_of(step.inputs_model).items():
        if spec.path_kind is None:
            continue
        value = values.get(field)
        for item in value if isinstance(value, list | tuple) else [value]:
            if item is not None:
                path = os.path.join(cwd, str(item))
                uses.append(PathUse(path, "input", field, _KINDS[spec.path_kind]))
    return uses


def _without_read_only_parents(uses: list[PathUse]) -> list[PathUse]:
    """Read-only directories that hold something writable, made plain inputs.

    The module's directory is often the working directory (which holds the
    run's workspace): declaring it read-only would ask a container backend to
    mount a writable path inside a read-only one, which it rightly refuses.
    """
    writable = [u.path for u in uses if u.writable]
    return [
        replace(u, writable=True)
        if not u.writable
        and any(w == u.path or w.startswith(u.path.rstrip("/") + "/") for w in writable)
        else u
        for u in uses
    ]


def _invocation(
    session: Session, name: str, node: Node, values: dict[str, Any], workspace: Path
) -> Invocation:
    from pydantic_core import to_jsonable_python

    from shinobi.pyrunner import RUNNER

    step: PyStep = node.step
    source, module, root = source_of(step)
    spec_file = workspace / "spec.json"
    paths = core_paths()
    spec = {
        "module_file": source,
        "module_name": module,
        "import_root": root,
        "qualname": step.fn.__qualname__,
        "inputs": to_jsonable_python(values),
        "outputs_file": str(workspace / "outputs.json"),
        "core_paths": paths,
    }
    spec_file.write_text(json.dumps(spec, indent=1))
    shinobi_dir = os.path.dirname(os.path.dirname(os.path.abspath(RUNNER)))
    # A container sees shinobi's own package and the site directories of its
    # dependencies, read-only (not a whole source checkout shinobi may sit in).
    sites = {d for n, d in _locations().items() if n != "shinobi"}
    uses = [
        PathUse(str(workspace), "output", "workspace", "dir"),
        PathUse(session.cwd, "output", "cwd", "dir"),
        PathUse(root, "input", "source", "dir", writable=False),
        PathUse(shinobi_dir, "input", "shinobi", "dir", writable=False),
        *(PathUse(d, "input", "site", "dir", writable=False) for d in sorted(sites)),
        *_path_uses(step, values, session.cwd),
    ]
    uses = _without_read_only_parents(uses)
    stdout_path, stderr_path = session.log_paths(name)
    return Invocation(
        step=name,
        argv=("python3", RUNNER, str(spec_file)),
        cwd=session.cwd,
        paths=tuple(uses),
        resources=node.resources,
        image=step.image,
        venv=node.venv or session.config.backend.venv,
        run_id=session.run_id,
        stdout_path=stdout_path,
        stderr_path=stderr_path,
        scratch_dir=str(workspace),
    )


def _run_elsewhere(
    session: Session, name: str, node: Node, values: dict[str, Any], backend_name: str
) -> StepResult:
    workspace = _workspace(session, name)
    run: BackendRun | None = None
    try:
        try:
            invocation = _invocation(session, name, node, values, workspace)
        except (TypeError, ValueError) as exc:
            return StepResult(
                name=name,
                status="failed",
                returncode=None,
                error=f"its inputs cannot cross to another interpreter as JSON: {exc}",
                backend=backend_name,
            )
        session.emit_started(name, {"backend": backend_name, "argv": list(invocation.argv)})
        started = time.time()
        run = session.backend(backend_name).run(invocation, session.control)
        finished = time.time()
        return _result(name, node, run, invocation, workspace, backend_name, started, finished)
    finally:
        # Teardown is over once run() has returned; a process that would not die
        # may still have the workspace open, so it is left in place.
        if run is None or not run.undying:
            shutil.rmtree(workspace, ignore_errors=True)


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
        error = f"the pystep raised {reply['error']}"
    elif error is None:
        if "outputs" not in reply:
            error = "the pystep runner exited without writing its outputs"
        else:
            try:
                outputs = dict(node.step.outputs_model.model_validate(reply["outputs"]))
            except ValueError as exc:
                error = f"its outputs do not match {node.step.outputs_model.__name__}: {exc}"
    result = StepResult(
        name=name,
        status="cancelled" if run.cancelled else ("failed" if error else "ok"),
        outputs=outputs,
        returncode=run.returncode,
        stdout=run.stdout,
        stderr=run.stderr,
        error="interrupted" if run.cancelled else error,
        signal=run.signal,
        backend=backend_name,
        argv=list(invocation.argv),
        started=started,
        finished=finished,
        details=dict(run.details),
    )
    if run.undying:
        result.details["undying"] = list(run.undying)
        result.details["workspace"] = str(workspace)
    return result


def _read_reply(path: Path) -> dict[str, Any]:
    try:
        reply = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return reply if isinstance(reply, dict) else {}
