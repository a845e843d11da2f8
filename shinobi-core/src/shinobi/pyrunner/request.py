"""What a @pystep sends to another interpreter: a JSON spec and the invocation carrying it.

The spec names the function (its module's file, module name and qualified
name), the inputs as JSON (paths as strings), where to write the outputs,
and the import directories of the shinobi running now, in which the runner
finds shinobi, pydantic and pydantic's dependencies (and nothing else) only
where the target interpreter lacks shinobi or pydantic. The
invocation's paths let a container see the workspace, the working
directory, the function's module, shinobi itself and the pystep's own path
inputs.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shinobi.backends.base import Invocation, PathKind, PathRole, PathUse
from shinobi.backends.streams import TAIL_CAPTURE
from shinobi.pyrunner import BOOT, RUNNER
from shinobi.recipe_modules import is_recipe_module
from shinobi.steps.argv import revealed, secret_texts, secrets_within
from shinobi.steps.types import fields_of, paths_within

if TYPE_CHECKING:
    from shinobi.graph import Node
    from shinobi.session import Session
    from shinobi.steps.functions import PyStep

__all__ = ["build_invocation", "core_paths", "interpreter", "source_of"]

#: Top-level modules the runner needs besides the standard library: shinobi,
#: pydantic and pydantic's own requirements. The runner lends a venv only these
#: from ninja's environment, never the rest of it.
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

    The runner finds :data:`_NEEDED` there for a foreign interpreter only
    when it lacks shinobi or pydantic.
    """
    return list(dict.fromkeys(_locations().values()))


def source_of(step: PyStep) -> tuple[str, str, str]:
    """(source file, module name, directory to import from) of a pystep's function."""
    fn = step.fn
    source = inspect.getsourcefile(fn) or fn.__code__.co_filename
    source = os.path.abspath(source)
    module = getattr(fn, "__module__", None) or "__shinobi_pystep__"
    root = os.path.dirname(source)
    if is_recipe_module(module):  # a recipe file's: its name finds it in any process
        return source, module, root
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


def _binding(step: PyStep) -> str | None:
    """The module-level name of ``step`` (or of its function) in its module, if any."""
    module = sys.modules.get(getattr(step.fn, "__module__", "") or "")
    if module is None:
        return None
    for name, value in vars(module).items():
        if value is step or value is step.fn or getattr(value, "fn", None) is step.fn:
            return name
    return None


_KINDS: dict[str, PathKind] = {"file": "file", "dir": "dir", "ms": "dir", "any": "any"}


def _path_uses(step: PyStep, values: dict[str, Any], cwd: str) -> list[PathUse]:
    """The pystep's own path inputs, so a container sees (and may write) them.

    A path parameter its return annotation names again (``out: File`` in and
    out) is the path the function writes, as a cab's passthrough is: an
    output, which need not exist before the step (its directory neither). So
    is one that is not there yet: a function returning a plain ``-> File``
    may make any of its path parameters, and one that only reads a missing
    file says so itself, as it would natively.
    """
    outputs = fields_of(step.outputs_model)
    uses: list[PathUse] = []
    for field, spec in fields_of(step.inputs_model).items():
        value = values.get(field)
        if spec.path_kind is None:
            if spec.nested_paths:  # inside a mapping or a model (dict[str, File])
                uses.extend(
                    _use(os.path.join(cwd, p), False, field, "any") for p in paths_within(value)
                )
            continue
        written = field in outputs and outputs[field].path_kind is not None
        for item in value if isinstance(value, list | tuple) else [value]:
            if item is not None:
                uses.append(
                    _use(os.path.join(cwd, str(item)), written, field, _KINDS[spec.path_kind])
                )
    return uses


def _use(path: str, written: bool, field: str, kind: PathKind) -> PathUse:
    made = written or not os.path.lexists(path)
    role: PathRole = "output" if made else "input"
    return PathUse(path, role, field, kind)


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


def interpreter(venv: str | None, cwd: str) -> str:
    """The command that starts the step's Python: ``python3``, or ``python`` in a venv
    that has no ``python3`` (virtualenv's of Python 2.7, kept for CASA 5), so
    :data:`BOOT` runs under the venv's own and names its version."""
    if venv:
        bin_dir = os.path.join(cwd, os.path.expanduser(venv), "bin")
        if not os.path.exists(os.path.join(bin_dir, "python3")) and os.path.exists(
            os.path.join(bin_dir, "python")
        ):
            return "python"
    return "python3"


def _echoed(session: Session, values: dict[str, Any]) -> tuple[Any, ...]:
    """The run's secrets that one of ``values`` holds as plain text (see
    :func:`shinobi.dispatch.step_secrets`)."""
    from shinobi.dispatch import step_secrets

    return step_secrets(session, values)


def build_invocation(
    session: Session,
    name: str,
    node: Node,
    values: dict[str, Any],
    workspace: Path,
    installer: str | None = None,
) -> Invocation:
    """The step as an ordinary invocation of the runner; writes its spec into ``workspace``.

    ``installer`` is the command that installs a package where the step runs (a
    venv's, see :func:`shinobi.backends.venv.installer`), for the runner to name in
    a remedy; without one it says ``pip install``.

    Raises TypeError or ValueError when an input is not a JSON value.
    """
    from pydantic_core import to_jsonable_python

    step: PyStep = node.step
    source, module, root = source_of(step)
    spec_file = workspace / "spec.json"
    paths = core_paths()
    own = (*secrets_within(list(values.values())), *_echoed(session, values))
    spec = {
        "module_file": source,
        "module_name": module,
        "import_root": root,
        "qualname": step.fn.__qualname__,
        # the module-level name the step is bound to: a factory's pysteps share
        # one qualname (make.<locals>.inner), and only the name tells them apart
        "binding": _binding(step),
        # a secret crosses as its value (the mask would reach the function); the
        # workspace is private to this user and removed when the step ends
        "inputs": to_jsonable_python(revealed(values)),
        # what the runner masks in the lines it writes itself (a traceback)
        # (its own, and the run's that its values hold: never the run's others)
        "secrets": secret_texts(own),
        "outputs_file": str(workspace / "outputs.json"),
        "core_paths": paths,
        "core_modules": list(_NEEDED),
        # the version those paths' packages were built for (see the runner)
        "core_python": list(sys.version_info[:2]),
        # where ninja's own shinobi is: named when the interpreter's own is another
        "core_package": os.path.dirname(os.path.dirname(os.path.abspath(RUNNER))),
        "installer": installer or "pip install",
    }
    # it holds the secrets' text: readable by this user alone, as their value is
    fd = os.open(spec_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w") as fh:
        fh.write(json.dumps(spec, indent=1))
    shinobi_dir = os.path.dirname(os.path.dirname(os.path.abspath(RUNNER)))
    # A container sees shinobi's own package and the site directories of its
    # dependencies, read-only (not a whole source checkout shinobi may sit in).
    sites = {d for n, d in _locations().items() if n != "shinobi"}
    uses = [
        # directories the step writes in, not into their parents: mounted themselves
        PathUse(str(workspace), "input", "workspace", "dir", mutable=True),
        PathUse(session.cwd, "input", "cwd", "dir", mutable=True),
        PathUse(root, "input", "source", "dir", writable=False),
        PathUse(shinobi_dir, "input", "shinobi", "dir", writable=False),
        *(PathUse(d, "input", "site", "dir", writable=False) for d in sorted(sites)),
        *_path_uses(step, values, session.cwd),
    ]
    uses = _without_read_only_parents(uses)
    stdout_path, stderr_path = session.log_paths(name)
    venv = session.venv_of(node)
    return Invocation(
        step=name,
        argv=(interpreter(venv, session.cwd), BOOT, str(spec_file)),
        cwd=session.cwd,
        paths=tuple(uses),
        resources=node.resources,
        image=step.image,
        venv=venv,
        run_id=session.run_id,
        stdout_path=stdout_path,
        stderr_path=stderr_path,
        scratch_dir=str(workspace),
        stdout_capture=TAIL_CAPTURE,  # no wrangler reads a pystep's output
        stderr_capture=TAIL_CAPTURE,
    )
