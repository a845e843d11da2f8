"""Run one @pystep in this interpreter: ``python3 runner.py SPEC.json``.

This file is executed by the step's own interpreter (a venv's ``bin/python``,
an image's ``python3``), which may not have shinobi or pydantic installed. So
it starts with the standard library only and makes its import path first:

1. the directory of the step's source file (so the module's own siblings
   import), in front;
2. only when ``shinobi`` or ``pydantic`` cannot be found, a directory
   *appended* (:func:`_lend_core`) that links, in the site directories of
   the shinobi that launched it, just the packages the runner needs
   (``spec["core_modules"]``: shinobi, pydantic and pydantic's own
   dependencies). The interpreter's own packages keep winning, and anything
   else the function imports is found in the interpreter's environment or
   not at all, as its ``python`` would: that is the point of running in a venv.

It then imports the function's module by file path, validates the inputs
(JSON, paths as strings) against the step's inputs model, calls the
function, and writes ``{"outputs": ...}`` or ``{"error": ...}`` as JSON to
the file the spec names. Exit status: 0 when the function returned, 1 when
it (or the set-up) raised, a KeyboardInterrupt of its own included (a real
SIGINT ends the process by that signal); the traceback goes to stderr. The
process ends once the result is written, without waiting for threads the
function left running (see :func:`_end`). A ``sys.exit(N)``
ends it with N (1 to 255; 1 for anything else), and its record and status are
those ``shinobi.exit_guard.describe_exit`` and ``pystep_runner._exit_status``
give a call in ninja's own process: they are written out here rather than
imported, since the shinobi this interpreter finds may be its own, older one.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import signal
import sys
import traceback
from typing import Any

__all__ = ["main"]


class RunnerError(Exception):
    """A set-up problem, worded for the person reading the step's error."""


class OutputMisfit(Exception):
    """What the function returned cannot go back to ninja (said on one line).

    ``stage`` tells ninja how to word it: ``outputs`` (its outputs model refuses
    the value), ``json`` (the value is no JSON), or ``returned`` (anything else
    raised with the value in hand, said as a call in ninja's process says it).
    """

    def __init__(self, said: str, stage: str) -> None:
        super().__init__(said)
        self.stage = stage


def _lend_core(spec: dict[str, Any]) -> str:
    """A directory holding links to just the packages the runner needs
    (``spec["core_modules"]``) in ninja's import directories; returns it.

    Appending ninja's whole site directories to ``sys.path`` would lend the
    step every package ninja's environment has (click, numpy, ...), so a
    function importing one the venv lacks would work here and fail in the
    venv's own ``python``. A directory on ``sys.path``, unlike an import hook,
    is also what a ``multiprocessing`` worker started by ``spawn`` inherits.
    It lives in the step's private workspace, removed when the step ends.
    """
    lent = os.path.join(os.path.dirname(spec["outputs_file"]), "lent")
    os.makedirs(lent, exist_ok=True)
    for name in spec["core_modules"]:
        found = importlib.machinery.PathFinder.find_spec(name, spec["core_paths"])
        if found is None or found.origin is None:
            continue
        source = found.origin
        if found.submodule_search_locations is not None:  # a package: its directory
            source = os.path.dirname(source)
        link = os.path.join(lent, os.path.basename(source))
        if not os.path.lexists(link):
            os.symlink(source, link)
    return lent


def _prepare_path(spec: dict[str, Any]) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    root = spec["import_root"]
    if root not in sys.path:
        sys.path.insert(0, root)
    missing = [n for n in ("shinobi", "pydantic") if importlib.util.find_spec(n) is None]
    lent = None
    if missing:
        _refuse_another_version(spec, missing)
        lent = _lend_core(spec)
        sys.path.append(lent)
    try:
        import pydantic

        import shinobi  # noqa: F401
    except ImportError as exc:
        _refuse_own_dependency(spec, exc, lent)
        version = ".".join(str(v) for v in sys.version_info[:2])
        raise RunnerError(
            f"{sys.executable} (Python {version}) cannot import {exc.name or 'pydantic'}"
            f" ({exc}); install shinobi-core into that environment, or use an interpreter of"
            f" the same Python version as the one running ninja"
        ) from exc
    except Exception as exc:  # pydantic's own check of its pydantic_core: a SystemError
        _refuse_own_dependency(spec, exc, lent)
        raise
    _refuse_pydantic_1(spec, str(getattr(pydantic, "VERSION", "?")), pydantic.__file__)
    _refuse_another_shinobi(spec)


def _refuse_another_shinobi(spec: dict[str, Any]) -> None:
    """The interpreter's own shinobi (a venv the docs told to install shinobi-core
    into) wins over ninja's, and may be older: what the runner needs of it was
    missing, and every pystep there failed as "importing the pystep's module
    raised ImportError", with a traceback through ninja's files."""
    try:
        from shinobi.recipe_modules import is_recipe_module  # noqa: F401
        from shinobi.steps.functions import PyStep  # noqa: F401
        from shinobi.steps.types import output_problem  # noqa: F401
    except (ImportError, AttributeError) as exc:
        import shinobi

        own = os.path.dirname(os.path.abspath(shinobi.__file__))
        ninjas = spec.get("core_package", "ninja's")
        raise RunnerError(
            f"{sys.executable} imports a shinobi of its own ({own}), not the one running"
            f" ninja ({ninjas}), and it lacks what ninja needs ({exc}); install the same"
            " shinobi-core into that environment as ninja's, or uninstall its own"
            " (ninja then lends it)"
        ) from exc


def _refuse_own_dependency(spec: dict[str, Any], exc: Exception, lent: str | None) -> None:
    """The pydantic ninja lends failed on a module of the environment's own, which
    wins over the lent one: an old ``typing_extensions`` without ``Sentinel`` (an
    ImportError), or a ``pydantic_core`` of another version than the one pydantic
    was built with (a SystemError naming it). The Python version is not the
    problem then, nor the step's module: that package is."""
    module = _own_dependency(spec, exc, lent)
    if module is None:
        return
    name = module.__name__
    own = _version_of(name)
    shown = f"{name} {own}" if own else name
    if isinstance(exc, ImportError):
        lacks = re.match(r"cannot import name '([^']+)'", exc.msg or "")
        said = f"it has no {lacks.group(1)!r}" if lacks else exc.msg
        why = f"older than the pydantic ninja lends it needs ({said})"
        fix = f"upgrade it there ({_installer(spec)} --upgrade {name})"
    else:  # pydantic takes only the pydantic_core it was built with: the newest may not be it
        said = str(exc).split(". ")[0].rstrip(".")
        why = f"which the pydantic ninja lends it refuses ({said})"
        wanted = _version_of(name, spec.get("core_paths"))
        pinned = f"'{name}=={wanted}'" if wanted else f"--upgrade {name}"
        fix = f"install ninja's there ({_installer(spec)} {pinned})"
    site = os.path.dirname(str(module.__file__))
    if hasattr(module, "__path__"):  # a package: the directory it is installed in
        site = os.path.dirname(site)
    raise RunnerError(
        f"{sys.executable} has its own {shown} (in {site}), {why}: {fix}, or install"
        " shinobi-core into that environment"
    ) from exc


def _own_dependency(spec: dict[str, Any], exc: Exception, lent: str | None) -> Any:
    """The module of the environment's own that ``exc`` is about, found before the
    lent one: the module an ImportError names, or one of pydantic's dependencies
    another error's message names; None when it is no such module."""
    if lent is None:
        return None
    if isinstance(exc, ImportError):
        names = [exc.name or ""]
    else:
        said = str(exc).lower().replace("-", "_")
        core = spec.get("core_modules", ())
        names = [n for n in core if n not in ("shinobi", "pydantic") and n in said]
    for name in names:
        module = sys.modules.get(name)
        where = getattr(module, "__file__", None)
        if module is not None and where and not where.startswith(lent + os.sep):
            return module
    return None


def _version_of(name: str, path: list[str] | None = None) -> str | None:
    """The installed version of the distribution ``name``: the environment's own,
    or with ``path`` the one in those directories (ninja's); None if unknown."""
    from importlib.metadata import distributions

    try:
        found = next(iter(distributions(name=name, path=path or sys.path)), None)
        return None if found is None else str(found.version)
    except Exception:  # damaged metadata: the name says enough
        return None


def _installer(spec: dict[str, Any]) -> str:
    """The command that installs into the step's environment (ninja picks it by what
    a venv has: its pip, else uv's, else its ensurepip then pip), or ``pip install``
    from an older spec."""
    return str(spec.get("installer") or "pip install")


def _refuse_pydantic_1(spec: dict[str, Any], version: str, where: str | None) -> None:
    """The environment's own pydantic 1 is found before ninja's: a pystep's models
    then fail inside the runner (``has no attribute 'model_validate'``), which
    read as the user's function failing. Say what it is instead."""
    if not version.startswith("1."):
        return
    site = os.path.dirname(os.path.dirname(where)) if where else "that environment"
    raise RunnerError(
        f"{sys.executable} has pydantic {version} (in {site}), and a pystep needs pydantic 2:"
        f" upgrade it there ({_installer(spec)} 'pydantic>=2'), or run the pystep in an"
        f" environment without pydantic 1"
    )


def _refuse_another_version(spec: dict[str, Any], missing: list[str]) -> None:
    """ninja's own pydantic and shinobi, borrowed by an interpreter of another
    version, fail deep inside their imports (an AttributeError in ``typing``):
    say what it is before trying."""
    core = tuple(spec.get("core_python", ()))
    here = tuple(sys.version_info[:2])
    if not core or core == here:
        return
    shown, theirs = ".".join(map(str, here)), ".".join(map(str, core))
    raise RunnerError(
        f"{sys.executable} is Python {shown} and has no {' or '.join(missing)} of its own;"
        f" ninja's (Python {theirs}) do not load in another version: install shinobi-core"
        f" into that environment, or make it with Python {theirs}"
    )


def _module_name(spec: dict[str, Any]) -> str:
    name = str(spec["module_name"])
    # A script run as __main__ must not re-run its `if __name__ == "__main__"` block.
    return "__shinobi_pystep__" if name in ("__main__", "__mp_main__") else name


def _load_step(spec: dict[str, Any]) -> Any:
    name = _module_name(spec)
    module_spec = importlib.util.spec_from_file_location(name, spec["module_file"])
    if module_spec is None or module_spec.loader is None:
        raise RunnerError(f"cannot import {spec['module_file']!r} as Python")
    module = importlib.util.module_from_spec(module_spec)
    from shinobi.recipe_modules import is_recipe_module  # importable: see _prepare_path

    if is_recipe_module(name):  # a script's, as in ninja (see shinobi.loaders)
        module.__package__ = ""
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    qualname = str(spec["qualname"])
    binding = spec.get("binding")
    found: Any = getattr(module, binding, None) if binding else None
    if found is None:
        found = module
        for part in qualname.split("."):
            found = getattr(found, part, None)
            if found is None:
                break
    if found is None:  # the PyStep was bound to another name than its function's
        alike = [
            value
            for value in vars(module).values()
            if getattr(value, "kind", None) == "python"
            and getattr(getattr(value, "fn", None), "__qualname__", None) == qualname
        ]
        if len(alike) > 1:  # a factory's pysteps: one qualname, and no telling them apart
            raise RunnerError(
                f"{spec['module_file']} has {len(alike)} pysteps made by one function"
                f" ({qualname!r}) and none is bound to the name ninja saw; bind each to a"
                " module-level name, or define them at module level"
            )
        found = alike[0] if alike else None
    if found is None:
        raise RunnerError(
            f"{spec['module_file']} has no module-level {qualname!r}; a pystep that runs in"
            " another interpreter must be defined at module level"
        )
    if getattr(found, "kind", None) == "python":
        return found
    from shinobi.steps.functions import PyStep

    return PyStep(found)


def _call(step: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    values = dict(_validated(step.inputs_model, inputs))
    return _sent_back(step, step.fn(**values))


def _validated(model: Any, data: Any) -> Any:
    """``data`` validated by ``model``, its models' fields taken by name too.

    ninja sends the values it validated as JSON keyed by field name; a model
    whose fields have aliases (``Field(alias="solInt")``) took only the aliases
    and gave its defaults instead, silently. pydantic takes names as well from
    2.11 on (``by_name``); an older one in the step's environment gets the data
    as it is.
    """
    import inspect

    if "by_name" in inspect.signature(model.model_validate).parameters:
        return model.model_validate(data, by_name=True)
    return model.model_validate(data)


def _sent_back(step: Any, returned: Any) -> dict[str, Any]:
    """``returned`` as the JSON ninja reads back.

    The function has returned: what fails now is its value, not its code, so
    it is said on one line as a call in ninja's own process says it, not as
    "the pystep raised" with a traceback through ninja's (lent) files.
    """
    try:
        outputs = step.outputs_model.model_validate(step.outputs_from(returned))
    except Exception as exc:
        from shinobi.steps.types import output_problem

        said = output_problem(exc)
        if said is None:
            raise OutputMisfit(_raised(exc), "returned") from exc
        raise OutputMisfit(said, "outputs") from exc
    try:
        dumped: dict[str, Any] = _as_json(outputs.model_dump(mode="python"))
    except Exception as exc:
        raise OutputMisfit(_unsendable(outputs, exc), "json") from exc
    return dumped


def _as_json(value: Any) -> Any:
    """``value`` (a model's python dump) as the JSON ninja reads back, as it is there.

    pydantic's JSON mode wrote a ``SecretStr`` as its mask, which ninja then
    took for the secret (the next step got ``**********``), and a NaN or an
    infinity in an untyped field (``dict``, ``Any``) as null. Secrets cross
    revealed, as they came in (the outputs file is this user's alone), and
    NaN as JSON's ``NaN``, which ninja reads back.
    """
    import inspect

    from pydantic_core import to_jsonable_python

    revealed = _revealed(value)
    if "inf_nan_mode" in inspect.signature(to_jsonable_python).parameters:
        return to_jsonable_python(revealed, inf_nan_mode="constants")
    return to_jsonable_python(revealed)  # an older pydantic-core: NaN as it does


def _revealed(value: Any) -> Any:
    """``value`` with every secret (``SecretStr``, ``SecretBytes``) replaced by its value."""
    if hasattr(value, "get_secret_value") and callable(value.get_secret_value):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {key: _revealed(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):  # JSON's list, whichever it was
        return [_revealed(item) for item in value]
    return value


def _unsendable(outputs: Any, exc: Exception) -> str:
    """Which output cannot be written as JSON, and why (pydantic's error names none)."""
    for name in type(outputs).model_fields:
        try:
            outputs.model_dump(mode="json", include={name})
        except Exception as inner:
            return f"output {name!r}: {_first_line(inner)}"
    return _first_line(exc)


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _write(path: str, payload: dict[str, Any]) -> None:
    partial = f"{path}.partial"
    with open(partial, "w") as fh:
        json.dump(payload, fh)
    os.replace(partial, path)


def _raised(exc: BaseException) -> str:
    """``Type: message``, or just ``Type`` for an empty message, as ninja words an
    exception raised in its own process (``shinobi.failures.raised_line``, kept in
    step here: this interpreter may find an older shinobi), not ``Type:``."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _user_traceback(exc: BaseException) -> str:
    """The traceback from the step's own first frame on: this runner's frames that
    called it say nothing of the user's bug (shinobi.failures.user_traceback does
    the same in ninja's process; this file runs where shinobi may not be installed)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))


def _masked(text: str, spec: dict[str, Any]) -> str:
    """``text`` with the step's secrets (their text, longest first) shown as ninja
    shows them: the runner writes these lines, not the step's function."""
    for secret in spec.get("secrets", ()):
        text = text.replace(secret, "**********")
    return text


#: Whether a SIGINT reached this process (see :func:`_watch_sigint`).
_sigint_received = False


def _watch_sigint() -> None:
    """Tell a SIGINT from a KeyboardInterrupt the function raised itself.

    Both reach the runner as KeyboardInterrupt. A raise is the function's own
    exception, said as in ninja's process (``KeyboardInterrupt: ...``), not
    "killed by SIGINT" when no signal was sent; a signal still ends the
    process by that signal. A SIGINT ignored or handled by whoever started
    the runner is left as it is.
    """
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def received(signum: int, frame: Any) -> None:
        global _sigint_received
        _sigint_received = True
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, received)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: runner.py SPEC.json\n")
        return 2
    # as under ninja (shinobi.cli.main._whole_ints): an int of any size is sent back;
    # a venv's Python older than 3.11 (and its backports) has no such limit to lift
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    _watch_sigint()
    with open(argv[1]) as fh:
        spec = json.load(fh)
    stage = "load"  # what failed, for ninja's wording: the set-up, the import, or the call
    try:
        _prepare_path(spec)
        step = _load_step(spec)
        stage = "call"
        outputs = _call(step, spec["inputs"])
    except RunnerError as exc:
        sys.stderr.write(_masked(f"shinobi: {exc}\n", spec))
        _write(spec["outputs_file"], {"error": str(exc), "stage": "setup"})
        return 1
    except OutputMisfit as exc:
        sys.stderr.write(_masked(f"shinobi: {exc}\n", spec))
        _write(spec["outputs_file"], {"error": str(exc), "stage": exc.stage})
        return 1
    except SystemExit as exc:  # said as a call in ninja's own process says it (docstring)
        _write(spec["outputs_file"], {"error": f"called sys.exit({exc.code!r})", "stage": "exit"})
        # the status a process can have: a failure is never 0 (sys.exit(0), sys.exit(None)
        # or sys.exit("text") failed the step too), and beyond 255 it would wrap
        return exc.code if isinstance(exc.code, int) and 0 < exc.code < 256 else 1
    except BaseException as exc:  # GeneratorExit, a class of the user's: said as any other
        if isinstance(exc, KeyboardInterrupt) and _sigint_received:
            raise  # a real SIGINT: the process ends by it, and ninja says so
        sys.stderr.write(_masked(_user_traceback(exc), spec))
        _write(spec["outputs_file"], {"error": _raised(exc), "stage": stage})
        return 1
    _write(spec["outputs_file"], {"outputs": outputs})
    return 0


def _end(status: int) -> None:
    """End the process with ``status`` now that the result is written.

    ``sys.exit`` would first wait for every non-daemon thread the function
    left running, so a step was over only when they ended, and never for one
    that runs for ever; in ninja's own process the step is over when the
    function returns. The std streams (and logging's handlers, which its exit
    hook would flush) are flushed first: they are all ``os._exit`` loses.
    """
    logging = sys.modules.get("logging")
    for flush in (getattr(logging, "shutdown", None), sys.stdout.flush, sys.stderr.flush):
        try:
            if flush is not None:
                flush()
        except Exception:  # a stream already closed: nothing more to write there
            pass
    os._exit(status)


if __name__ == "__main__":
    _end(main(sys.argv))
