"""The venv backend: a step's command inside an existing Python virtualenv.

The environment is what ``activate`` makes, minus the shell: the venv's
``bin`` first on PATH (any other activated venv's ``bin`` taken off it),
``VIRTUAL_ENV`` set, and the inherited ``PYTHONHOME``/``PYTHONPATH`` cleared.
Variables a cab declares itself still apply on top.

The command rule, which is what makes a missing tool fail loudly:

* a bare command (``tricolour``, ``python3``) means the venv's own copy: it is
  rewritten to ``VENV/bin/NAME``. If the venv has no such executable the step
  is refused, naming the command and the venv, instead of running a host
  binary of the same name that merely happens to be on PATH;
* a command written as a path (``/usr/bin/sort``, ``./tool``) is the author's
  explicit choice and runs as written;
* bare names listed in the ``backend.venv_host_commands`` setting (e.g.
  ``["sh", "cp"]``) may come from the host PATH (still searched venv ``bin``
  first).

The venv is the step's ``venv=`` or the configured ``backend.venv``; with
neither, the step runs natively and a warning says so. Declared resources
limit nothing here (admission control only), and nothing is isolated.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shinobi.backends.base import (
    Availability,
    Backend,
    BackendRun,
    Capabilities,
    Invocation,
    RunControl,
)
from shinobi.backends.native import NativeBackend
from shinobi.backends.process import run_process, script_interpreter
from shinobi.errors import ShinobiError
from shinobi.programs import is_executable
from shinobi.step_names import unsliced
from shinobi.wording import listed

__all__ = [
    "VenvBackend",
    "VenvError",
    "installer",
    "no_venv_warning",
    "pystep_venv_problem",
    "resolve_command",
    "venv_environment",
    "venv_problem",
    "venv_python_version",
    "venv_ran_in",
]


class VenvError(ShinobiError):
    """A step's venv is unusable, or lacks the command the step runs."""


def venv_problem(venv: str) -> str | None:
    """Why ``venv`` is not a usable virtualenv, or None when it is."""
    if not os.path.isdir(venv):
        if os.path.exists(venv):
            return (
                f"the venv {venv!r} is not a directory; name the directory a virtualenv was"
                " made in (`python3 -m venv DIR`)"
            )
        return (
            f"the venv {venv!r} does not exist; create it with"
            f" `python3 -m venv {shlex.quote(venv)}`"
        )
    bin_dir = os.path.join(venv, "bin")
    pythons = [os.path.join(bin_dir, n) for n in ("python", "python3")]
    if any(is_executable(p) for p in pythons):
        return None
    parent = os.path.dirname(os.path.normpath(venv))
    if os.path.basename(os.path.normpath(venv)) == "bin" and venv_problem(parent) is None:
        return f"{venv!r} is the bin directory of the virtualenv {parent!r}; name {parent!r} itself"
    return _broken_venv(venv, pythons) or (
        f"{venv!r} is not a virtualenv (no executable bin/python); create one with"
        f" `python3 -m venv {shlex.quote(venv)}`"
    )


def _broken_venv(venv: str, pythons: list[str]) -> str | None:
    """Why a venv that once was one no longer runs, with the remedy that mends it.

    Plain ``python3 -m venv DIR`` keeps a dangling ``bin/python`` link as it
    is, so the remedy for a venv whose Python was removed or upgraded away,
    or one whose creation was interrupted, is ``--clear``.
    """
    remedy = _recreate(venv)
    for python in pythons:
        if os.path.islink(python) and not os.path.exists(python):
            target = os.path.realpath(python)
            return f"the venv {venv!r} is broken: its Python {target} no longer exists; {remedy}"
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        return f"the venv {venv!r} is incomplete (it has no bin/python); {remedy}"
    return None


def venv_python_version(venv: str, *, ask: bool = True) -> tuple[int, ...] | None:
    """The venv's Python version (``(3, 11, 7)``; at least major and minor), or None
    when it cannot be told.

    Read from ``pyvenv.cfg`` (``version`` as ``venv`` writes it, ``version_info``
    as virtualenv and uv do), so knowing it costs no process; only a venv
    without one (an old virtualenv's) is asked by running its interpreter,
    and only with ``ask``.
    """
    try:
        with open(os.path.join(venv, "pyvenv.cfg")) as fh:
            config = dict(
                (k.strip().lower(), v.strip()) for k, _, v in (line.partition("=") for line in fh)
            )
    except (OSError, UnicodeDecodeError):
        config = {}
    said = config.get("version") or config.get("version_info")
    if said is None and ask:
        said = _ask_venv_python(venv, "import sys; print('%d.%d.%d' % sys.version_info[:3])")
    numbers = []
    for part in (said or "").split("."):
        if not part.isdigit():
            break
        numbers.append(int(part))
    return tuple(numbers) if len(numbers) >= 2 else None


def _ask_venv_python(venv: str, code: str) -> str | None:
    """What ``code`` prints under the venv's own interpreter (activated), or None."""
    from shinobi.pyrunner.request import interpreter

    python = os.path.join(venv, "bin", interpreter(venv, venv))
    try:
        done = subprocess.run(
            [python, "-c", code],
            capture_output=True,
            text=True,
            timeout=30,
            env=venv_environment(venv, {}),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def pystep_venv_problem(venv: str) -> str | None:
    """Why a @pystep cannot run in ``venv``, known before the run; None when it can
    (or when it cannot be told, which the step itself then says).

    Without this the pre-flight passed such a venv and the step failed only
    when it started, after the steps upstream of it had run.
    """
    from shinobi.pyrunner.boot import MINIMUM

    version = venv_python_version(venv)
    if version is None:
        return None
    version = version[:2]
    shown = ".".join(map(str, version))
    if version < MINIMUM:
        least = ".".join(map(str, MINIMUM))
        return (
            f"the venv {venv!r} is Python {shown}, and a @pystep needs Python"
            f" {least} or newer where it runs: make the venv with a newer Python,"
            " or make the step a Cab, whose command line runs under any Python"
        )
    ours = tuple(sys.version_info[:2])
    if version == ours:
        return None  # ninja's shinobi and pydantic load there, if it lacks its own
    code = (
        "import importlib.util as u;"
        " print(' or '.join(n for n in ('shinobi', 'pydantic') if u.find_spec(n) is None))"
    )
    missing = _ask_venv_python(venv, code)
    if not missing:
        return None
    theirs = ".".join(map(str, ours))
    return (
        f"the venv {venv!r} is Python {shown} and has no {missing} of its own; ninja's"
        f" (Python {theirs}) do not load in another version: install shinobi-core into"
        f" that venv, or make it with Python {theirs}"
    )


def _recreate(venv: str) -> str:
    """The remedy for a venv that no longer runs, as a command to paste (quoted)."""
    return f"recreate it with `python3 -m venv --clear {shlex.quote(venv)}` and reinstall its tools"


@dataclass(frozen=True, slots=True)
class ResolvedCommand:
    """An argv after the command rule: the argv to run, or why it cannot run."""

    argv: tuple[str, ...]
    problem: str | None = None


def resolve_command(
    argv: Sequence[str], venv: str, host_commands: Sequence[str] = ()
) -> ResolvedCommand:
    """Apply the command rule (see the module docstring) to ``argv``."""
    command = argv[0]
    if "/" in command:
        return ResolvedCommand(tuple(argv))
    own = os.path.join(venv, "bin", command)
    if is_executable(own):
        return ResolvedCommand((own, *argv[1:]))
    if command in host_commands:
        return ResolvedCommand(tuple(argv))
    install = f"install it there ({installer(venv)} ...)"
    host = shutil.which(command, path=_host_path(venv))
    if host is None:  # nowhere on this host either: naming a host path would mislead
        return ResolvedCommand(
            tuple(argv),
            f"command {command!r} is not installed in the venv {venv!r}, nor found on this"
            f" host's PATH: {install}, or correct the command's name in the cab",
        )
    return ResolvedCommand(
        tuple(argv),
        f"command {command!r} is not installed in the venv {venv!r}: {install}, write the"
        f" host's path ({host}) in the cab, or list it in backend.venv_host_commands",
    )


def installer(venv: str) -> str:
    """The command that installs a package into ``venv``, by what the venv has, to paste.

    ``VENV/bin/pip`` where there is one; else pip as a module of the venv's
    Python (its launcher removed); else, for a venv without pip (what ``uv
    venv`` and ``python3 -m venv --without-pip`` make), uv's where uv is on
    PATH, and pip put there first by the venv's own ``ensurepip`` where it is
    not: a command naming a uv this host lacks mends nothing. The pystep
    runner words its own remedies (pydantic 1, an old typing_extensions) with
    it too.
    """
    bin_dir = os.path.join(venv, "bin")
    pip = os.path.join(bin_dir, "pip")
    if is_executable(pip):
        return f"{shlex.quote(pip)} install"
    python = shlex.quote(os.path.join(bin_dir, "python"))
    if glob.glob(os.path.join(glob.escape(venv), "lib*", "python*", "site-packages", "pip")):
        return f"{python} -m pip install"
    if shutil.which("uv") is not None:
        return f"uv pip install --python {python}"
    return f"{python} -m ensurepip && {python} -m pip install"


def _host_path(venv: str) -> str:
    """ninja's own PATH without the venv's ``bin`` (ninja may run inside that venv)."""
    own = os.path.realpath(os.path.join(venv, "bin"))
    parts = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(p for p in parts if p and os.path.realpath(p) != own)


def _dead_interpreter(command: str, venv: str) -> str | None:
    """Why the venv's own script ``command`` cannot start: its ``#!`` names a missing Python.

    Console scripts carry the absolute path of the venv's interpreter, so a
    venv that was moved or copied elsewhere still looks complete but none of
    its tools run. Only the venv's own scripts are checked: a program the
    cab names by path is the author's to mend.
    """
    if os.path.dirname(command) != os.path.join(venv, "bin"):
        return None
    interpreter = script_interpreter(command)
    if interpreter is None:
        return None
    recreate = _recreate(venv)
    if not os.path.exists(interpreter):
        return (
            f"{command} cannot run: its #! line names {interpreter}, which does not exist"
            f" (was the venv moved? {recreate})"
        )
    # A copied venv's scripts still start, under the original's interpreter and
    # packages: the step would run, silently, in another venv than declared.
    home = os.path.dirname(os.path.dirname(interpreter))
    if os.path.isfile(os.path.join(home, "pyvenv.cfg")) and not _same_directory(home, venv):
        return (
            f"{command} would run in another venv: its #! line names {interpreter}, the"
            f" interpreter of {home} (was this venv copied from there? {recreate})"
        )
    return None


def _moved_or_copied(venv: str) -> str | None:
    """Why ``venv``'s own scripts would not run as its own (it was moved, or copied
    from another venv); None if sound, or if it cannot tell.

    The test is the run's (``_dead_interpreter``), on every script in ``bin``
    whose ``#!`` names a Python: the console scripts installers write with the
    venv's interpreter. Not pip's alone, which a venv made by ``uv venv`` does
    not have. A venv with no such script has nothing a moved copy breaks.
    Only a directory with a ``pyvenv.cfg`` is judged: an installed Python
    (pyenv's, one built from source) is no venv to remake.
    """
    if not os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        return None
    bin_dir = os.path.join(venv, "bin")
    try:
        names = sorted(os.listdir(bin_dir))
    except OSError:
        return None
    for name in names:
        script = os.path.join(bin_dir, name)
        if os.path.islink(script) or not os.path.isfile(script):
            continue  # bin/python and its aliases: links, not scripts
        interpreter = script_interpreter(script)
        if interpreter is None or not os.path.basename(interpreter).startswith("python"):
            continue
        problem = _dead_interpreter(script, venv)
        if problem is not None:
            return problem
    return None


def _same_directory(one: str, other: str) -> bool:
    """Whether two paths are one directory: by inode, which also sees through a
    bind mount (``/net/home`` and ``/home`` on a cluster), not only links."""
    try:
        return os.path.samefile(one, other)
    except OSError:
        return os.path.realpath(one) == os.path.realpath(other)


def venv_environment(
    venv: str, declared: Mapping[str, str], base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a step in ``venv``: ``base`` (ninja's) activated, plus ``declared``.

    What the cab declares wins, except that the venv's ``bin`` stays first on
    a ``PATH`` it declares: that is what running in the venv means.
    """
    env = dict(os.environ if base is None else base)
    for name in ("PYTHONHOME", "PYTHONPATH"):
        env.pop(name, None)
    path = declared.get("PATH", env.get("PATH", os.defpath)).split(os.pathsep)
    previous = env.get("VIRTUAL_ENV")
    if previous:  # activate deactivates the venv that was active before
        path = [p for p in path if p.rstrip("/") != os.path.join(previous, "bin")]
    env.update(declared)
    bin_dir = os.path.join(venv, "bin")
    env["PATH"] = os.pathsep.join([bin_dir, *[p for p in path if p != bin_dir]])
    env["VIRTUAL_ENV"] = declared.get("VIRTUAL_ENV", venv)
    return env


def _refused(invocation: Invocation, reason: str) -> BackendRun:
    """The outcome of a step that could not start; its stderr log says why."""
    message = f"shinobi: {reason}\n"
    if invocation.stderr_path:
        with open(invocation.stderr_path, "w") as fh:
            fh.write(message)
    return BackendRun(returncode=127, stderr=message, reason=reason)


class VenvBackend(Backend):
    """Runs the command with a virtualenv activated. No isolation, no limits.

    Settings: ``venv`` (``backend.venv``) is the venv of steps that name none;
    ``venv_host_commands`` (``backend.venv_host_commands``) lists the bare
    commands allowed to come from the host PATH.
    """

    name = "venv"
    capabilities = Capabilities()
    settings_keys = frozenset({"venv", "venv_host_commands"})

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(settings)
        # Steps already warned about before the run: not warned again as they start.
        self._warned: set[str] = set()

    def venv_for(self, invocation: Invocation) -> str | None:
        """The venv ``invocation`` runs in, absolute, or None when none is declared."""
        chosen = invocation.venv or self.settings.get("venv")
        if not chosen:
            return None
        path = os.path.expanduser(str(chosen))
        return os.path.normpath(os.path.join(invocation.cwd, path))

    @property
    def host_commands(self) -> tuple[str, ...]:
        value = self.settings.get("venv_host_commands") or ()
        return (value,) if isinstance(value, str) else tuple(str(v) for v in value)

    def check(self) -> Availability:
        configured = self.settings.get("venv")
        if not configured:
            return Availability(
                True, "ready; a step names its venv with venv=, or set backend.venv"
            )
        venv = os.path.abspath(os.path.expanduser(str(configured)))
        problem = venv_problem(venv) or _moved_or_copied(venv)
        if problem is not None:
            return Availability(False, problem)
        return Availability(True, f"ready; backend.venv is {venv}")

    def problem(self, invocation: Invocation, venv: str) -> str | None:
        """Why ``invocation`` cannot run in ``venv`` (an unusable venv, a missing tool,
        a tool of a moved or copied venv, or, for a pystep's runner, a Python it
        cannot run under)."""
        problem = self.checked(invocation, venv).problem
        if problem is None and _runs_a_pystep(invocation):
            problem = pystep_venv_problem(venv)
        return problem

    def checked(self, invocation: Invocation, venv: str) -> ResolvedCommand:
        """``invocation``'s argv after the command rule, with why it cannot run.

        The one check of both the pre-flight (``problem``) and ``run``: a command
        chosen only at run time (``ctx.run(backend="venv")``) is refused as the
        pre-flight refuses it, not run under another venv's interpreter. A
        pystep's Python version is left to the runner at run time, which says
        the same in its own process (no extra interpreter started per slice).
        """
        problem = venv_problem(venv)
        if problem is not None:
            return ResolvedCommand(tuple(invocation.argv), problem)
        resolved = resolve_command(invocation.argv, venv, self.host_commands)
        problem = resolved.problem or _dead_interpreter(resolved.argv[0], venv)
        return ResolvedCommand(resolved.argv, problem)

    def prepare(self, invocations: list[Invocation]) -> list[str]:
        """Refuse a run whose venvs or tools are missing; warn about steps with no venv
        (a pystep's runner among them: one line says it for cabs and pysteps)."""
        unvenved: dict[str, bool] = {}  # a step, as the graph names it: is it a pystep?
        # One look per (venv, command): a scatter of thousands names a handful of tools.
        looked: dict[tuple[str, str, bool], str | None] = {}
        for invocation in invocations:
            venv = self.venv_for(invocation)
            if venv is None:
                unvenved.setdefault(unsliced(invocation.step), _runs_a_pystep(invocation))
                continue
            seen = (venv, invocation.argv[0], _runs_a_pystep(invocation))
            if seen not in looked:
                looked[seen] = self.problem(invocation, venv)
            problem = looked[seen]
            if problem is not None:
                raise VenvError(f"step {invocation.step!r}: {problem}")
        self._warned.update(unvenved)
        if not unvenved:
            return []
        return [no_venv_warning(list(unvenved), {s for s, py in unvenved.items() if py})]

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        venv = self.venv_for(invocation)
        if venv is None:
            step = unsliced(invocation.step)  # once for a scatter, as before the run
            if step not in self._warned:
                self._warned.add(step)
                control.warn(no_venv_warning([step]))
            return NativeBackend(self.settings).run(invocation, control)
        resolved = self.checked(invocation, venv)
        if resolved.problem is not None:
            return _refused(invocation, resolved.problem)
        return run_process(
            resolved.argv,
            cwd=invocation.cwd,
            control=control,
            env=venv_environment(venv, invocation.env),
            stdout_path=invocation.stdout_path,
            stderr_path=invocation.stderr_path,
            stdout_capture=invocation.stdout_capture,
            stderr_capture=invocation.stderr_capture,
            outputs=invocation.paths,
        )


def venv_ran_in(backend: Backend, invocation: Invocation) -> str | None:
    """The venv ``invocation`` runs in on ``backend`` (absolute), for the step's
    record; None when the backend is not the venv backend, or no venv is declared."""
    return backend.venv_for(invocation) if isinstance(backend, VenvBackend) else None


def _runs_a_pystep(invocation: Invocation) -> bool:
    """Whether ``invocation`` starts the pystep runner (``python3 BOOT ...``)."""
    from shinobi.pyrunner import BOOT

    return invocation.argv[1:2] == (BOOT,)


def no_venv_warning(steps: Sequence[str], pysteps: Collection[str] = ()) -> str:
    """That ``steps`` (those in ``pysteps`` being pysteps) chose the venv backend but
    name no venv, so run natively: one line for all, cabs and pysteps alike, so a
    recipe mixing both is not warned twice of the one missing setting."""
    shown = listed(steps, 5, repr)
    many = len(steps) > 1
    who = f"steps {shown}" if many else f"step {shown}"
    pystep = sum(1 for s in steps if s in pysteps)
    if pystep == 0:
        where, what = "the step, or backend.venv in the configuration", "running natively"
    elif pystep == len(steps):
        where = "the pystep, or backend.venv"
        what = "they run in this process" if many else "it runs in this process"
    else:
        where = "the step or pystep, or backend.venv in the configuration"
        what = "running natively (a pystep: in this process)"
    return f"{who} selected the venv backend but no venv is declared (venv= on {where}); {what}"
