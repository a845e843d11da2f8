"""Loading recipes: ``file.py:name`` targets, and models built from plain tables.

A target file is imported as a fresh module each time, so a recipe file needs
no package around it and a syntax error in it is reported as the user's error,
with the file and line, not as a traceback from deep inside shinobi.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shinobi.errors import LoadError, did_you_mean, exception_line
from shinobi.exit_guard import ExitRefused, exits_refused
from shinobi.file_kinds import kind_of

__all__ = ["build_model", "is_runnable", "kind_of_value", "load_target", "split_target"]


def build_model(name: str, fields: Mapping[str, tuple[Any, bool, Any]]) -> type[Any]:
    """A pydantic model from ``{field: (dtype, required, default)}``.

    ``dtype`` is a Python type or one of the names ``"File"``, ``"Directory"``,
    ``"MS"``, ``"str"``, ``"int"``, ``"float"``, ``"bool"``, and ``"list[X]"``
    of those. An optional field (``required=False``) may also be None.
    """
    from pydantic import create_model

    from shinobi.steps.types import DTYPES

    scalars: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "Path": Path}
    scalars.update(DTYPES)

    def resolve(dtype: Any) -> Any:
        if not isinstance(dtype, str):
            return dtype
        text = dtype.strip()
        if text.startswith("list[") and text.endswith("]"):
            return list[resolve(text[5:-1])]  # type: ignore[misc]
        if text not in scalars:
            raise ValueError(
                f"model {name!r}: unknown dtype {dtype!r} (use one of {', '.join(scalars)})"
            )
        return scalars[text]

    definitions: dict[str, Any] = {}
    for field_name, spec in fields.items():
        if not isinstance(field_name, str) or field_name.startswith(("_", "model_")):
            # pydantic keeps _x as a private attribute (dropped from the fields
            # without a word) and reserves model_* (model_config broke the model)
            raise ValueError(
                f"model {name!r}: {field_name!r} cannot be a field's name (a name starting"
                " with '_' or 'model_' is pydantic's own); rename it"
            )
        dtype, required, default = _field_spec(name, field_name, spec)
        annotation = resolve(dtype)
        if required:
            definitions[field_name] = (annotation, ...)
        else:
            definitions[field_name] = (annotation | None, default)
    model: type[Any] = create_model(name, **definitions)
    return model


def _field_spec(model: str, field_name: str, spec: Any) -> tuple[Any, bool, Any]:
    """``spec`` as ``(dtype, required, default)``, or a ValueError naming the model
    and field: unpacked blindly, a pair said only "not enough values to unpack"."""
    if isinstance(spec, tuple | list) and len(spec) == 3:
        dtype, required, default = spec
        if not isinstance(required, bool):  # "False" is true: the field became required
            raise ValueError(
                f"model {model!r}, field {field_name!r}: required must be True or False,"
                f" not {required!r}"
            )
        if required and default is not None:  # dropped without a word: required has none
            raise ValueError(
                f"model {model!r}, field {field_name!r}: a required field takes no default"
                f" (given {default!r}); make it (dtype, False, {default!r}) to default to it"
            )
        return dtype, required, default
    raise ValueError(
        f"model {model!r}, field {field_name!r}: expected (dtype, required, default),"
        f" e.g. ('File', False, None), not {spec!r}"
    )


def split_target(target: str) -> tuple[Path, str]:
    """``path/to/file.py:name`` -> (path, name)."""
    target = os.fspath(target)  # a Path from a script: the text it names
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name or name.endswith(".py"):
        # the file alone (its name may hold a colon, my:demo.py): say what it holds
        whole = Path(target if name.endswith(".py") else path or target)
        if whole.suffix == ".py" and whole.is_file():
            raise LoadError(
                f"target {target!r} names no recipe: write {whole}:NAME"
                f"{_listing(_import_file(whole))}"
            )
        if not sep or not path or not name:
            raise LoadError(
                f"target {target!r} is not FILE.py:NAME (e.g. examples/offload_demo.py:pipe)"
            )
    return Path(path), name


def _file_mode(path: Path) -> int | None:
    """``path``'s mode (links followed), or None when nothing is there: one ``stat``
    answering what ``is_dir`` and ``is_file`` would each ask again."""
    try:
        return os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:  # a typo or a pasted blob: the user's to fix
            shown = str(path) if len(str(path)) <= 80 else f"{str(path)[:77]}..."
            raise LoadError(
                f"recipe file {shown!r} has a name too long for this file system"
                f" ({len(os.fsencode(path.name))} bytes); check the path"
            ) from None
        if exc.errno in _NOTHING_THERE:
            return None
        raise  # a permission refused on the way: the machine's refusal, said as such


#: What ``stat`` says of a path with nothing there, as pathlib's ``is_file`` takes it.
_NOTHING_THERE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def _import_file(path: Path) -> Any:
    mode = _file_mode(path)
    if mode is not None and stat.S_ISDIR(mode):
        raise LoadError(f"{str(path)!r} is a directory; name the recipe's .py file in it")
    if mode is not None and not stat.S_ISREG(mode):  # a FIFO, <(cat r.py), a device
        raise LoadError(
            f"recipe file {str(path)!r} is {kind_of(mode)}, not a file ninja can import;"
            " save the recipe as a .py file and name that"
        )
    if mode is None:
        if os.path.islink(path):
            raise LoadError(
                f"recipe file {str(path)!r} is a symbolic link to {os.readlink(path)!r},"
                " which does not exist (or is a loop of links); fix the link or name the file"
            )
        with_suffix = path.with_name(path.name + ".py")
        fix = f"did you mean {str(with_suffix)!r}?" if with_suffix.is_file() else "check the path"
        raise LoadError(f"recipe file {str(path)!r} does not exist; {fix}")
    _refuse_unreadable(path)
    from shinobi.recipe_modules import module_name as name_of

    module_name = name_of(path)  # a worker process finds the file by it (multiprocessing)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot load {str(path)!r} as Python; recipe files end in .py")
    module = importlib.util.module_from_spec(spec)
    # a script's: `from . import x` is refused as having no parent package, not
    # looked up in shinobi.recipe_modules, whose name it bears only to be found
    module.__package__ = ""
    sys.modules[module_name] = module
    directory = str(path.resolve().parent)
    added = directory not in sys.path
    if added:
        sys.path.insert(0, directory)
    here = _cwd()
    try:
        with exits_refused():  # os._exit(0) at import would end ninja with 0, nothing run
            spec.loader.exec_module(module)
        _refuse_moved(path, here)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        at = f":{exc.lineno}" if exc.lineno else ""  # none for a null byte in the file
        raise LoadError(
            f"{exc.filename or path}{at}: syntax error: {exc.msg}; fix the recipe file"
        ) from None
    except LoadError:
        sys.modules.pop(module_name, None)
        raise
    except (Exception, SystemExit) as exc:  # a script's sys.exit() at import, too
        sys.modules.pop(module_name, None)
        _refuse_shadowing(directory)  # the likelier cause of whatever broke
        line = _failing_line(path, exc)
        where = f"{path}:{line}" if line else str(path)
        statement = _statement_at(path, line) if line else None
        context = f" (in `{statement}`)" if statement else ""
        said = (
            f"called os._exit({exc.code!r}), which would have ended ninja before anything ran;"
            " a recipe file should only define recipes"
            if isinstance(exc, ExitRefused)
            else f"raised {exception_line(exc)}"
        )
        raise LoadError(f"{where}: importing the recipe file {said}{context}") from exc
    finally:
        if here is not None and _cwd() != here:
            os.chdir(here)
        if added:  # last from now on: ninja's own later imports find the standard library
            with contextlib.suppress(ValueError):
                sys.path.remove(directory)
            sys.path.append(directory)
    _refuse_closed_streams(path)
    _refuse_shadowing(directory)
    return module


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # ninja's own directory was removed
        return None


def _refuse_unreadable(path: Path) -> None:
    """Refuse a recipe file ninja may not read, in those words: importing it said
    ``raised PermissionError: [Errno 13] ...`` as if the recipe's code had."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
    except PermissionError:
        raise LoadError(
            f"recipe file {str(path)!r} cannot be read (permission denied); fix its"
            " permissions, or run ninja as a user who may read it"
        ) from None
    except OSError:  # anything else is said by the import, as before
        pass


def _refuse_moved(path: Path, here: str | None) -> None:
    """Refuse a recipe file that changed ninja's working directory as it was imported.

    ``os.chdir(os.path.dirname(__file__))`` at the top of a script is common;
    under ninja it moved ``.shinobi/`` (so ``ninja runs`` where the user
    started found nothing) and every relative input and output, silently. The
    directory is put back before this is raised (see :func:`_import_file`).
    """
    now = _cwd()
    if here is None or now == here:
        return
    raise LoadError(
        f"{path}: importing the recipe file changed the working directory (to {now}); ninja"
        " works where it is started, so run it from there (cd first), or build paths from"
        " the file's own directory (Path(__file__).parent / ...) without changing directory"
    )


def _refuse_closed_streams(path: Path) -> None:
    """A recipe file that closed ninja's stdout or stderr as it loaded: said as the
    recipe's doing (exit 2), not as ninja failing to print (an internal error)."""
    for name in ("stdout", "stderr"):
        try:  # a recipe's own stand-in (a tee) may have no `closed`, or one that raises
            closed = getattr(sys, name).closed is True
        except Exception:
            closed = False
        if closed:
            # somewhere for Python to flush to as it exits (the stream's descriptor
            # went with it); the refusal goes to stderr, if that is still open
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - lives as long as ninja
            raise LoadError(
                f"{path}: importing the recipe file closed sys.{name}, where ninja prints;"
                " a recipe file should only define recipes"
            )


#: Standard modules nothing in shinobi or its libraries imports: a project's own
#: ``test.py`` or ``code.py`` is its business.
_NAMES_FOR_THE_TAKING = frozenset(
    {"antigravity", "code", "idlelib", "lib2to3", "test", "this", "tkinter", "turtle"}
)


def _refuse_shadowing(directory: str) -> None:
    """Refuse a module of the recipe's directory that took a standard module's place.

    The directory comes first on ``sys.path`` while the recipe file runs, as a
    script's does, so a ``json.py`` beside it is what ``import json`` finds
    there, for shinobi as for the recipe; ninja would then fail far from the
    cause. After the import the directory goes last, so helper modules the
    steps import later are still found.
    """
    inside = os.path.join(directory, "")
    for name in sorted((sys.stdlib_module_names - _NAMES_FOR_THE_TAKING) & sys.modules.keys()):
        origin = getattr(sys.modules[name], "__file__", None) or ""
        if origin.startswith(inside):
            raise LoadError(
                f"{origin} hides Python's own {name!r} module, which shinobi needs; rename it"
            )


def _failing_line(path: Path, exc: BaseException) -> int | None:
    """The line of the recipe file whose statement raised."""
    import traceback

    target = str(path.resolve())
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == target]
    return frames[-1].lineno if frames else None


def _statement_at(path: Path, line: int, limit: int = 120) -> str | None:
    """The statement around ``line``, on one line: ``Resources(cpus=-1)`` says nothing
    about which step it was meant for, the ``add_step(...)`` around it does."""
    import ast

    try:
        source = path.read_text()
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return None
    best: tuple[int, str] | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        start, end = node.lineno, node.end_lineno or node.lineno
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([start, *(d.lineno for d in node.decorator_list)])
            text = f"{'class' if isinstance(node, ast.ClassDef) else 'def'} {node.name}"
        else:
            text = ast.get_source_segment(source, node) or ""
        if start <= line <= end and (best is None or end - start < best[0]):
            best = (end - start, " ".join(text.split()))
    if best is None or not best[1]:
        return None
    text = best[1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_target(target: str) -> Any:
    """The Recipe (or other step) that ``file.py:name`` names."""
    path, name = split_target(target)
    module = _import_file(path)
    try:
        value = getattr(module, name)
    except AttributeError:
        raise LoadError(
            f"{path} has no {name!r}{did_you_mean(name, _runnable(module))}{_listing(module)}"
        ) from None
    except Exception as exc:  # the recipe file's own module __getattr__ failed
        raise LoadError(
            f"{path}: looking up {name!r} raised {exception_line(exc)}; fix the recipe file"
        ) from None
    if not is_runnable(value):
        raise LoadError(
            f"{path}:{name} is {kind_of_value(value)}, not a Recipe; name a Recipe object"
            f"{_listing(module)}"
        )
    return value


def kind_of_value(value: Any) -> str:
    """``a type`` (any class), ``a function``, ``a str``: what a target that is no step names."""
    if isinstance(value, type):
        return "a type"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def is_runnable(value: Any) -> bool:
    """A Recipe, a Cab or a step made by ``@shinobi.pystep``/``@shinobi.step``."""
    if isinstance(value, type):
        return False
    try:
        kind = getattr(value, "kind", None)
    except Exception:  # an object whose attribute lookup itself fails is no step
        return False
    return kind in ("recipe", "cab", "python", "function")


def _runnable(module: Any) -> list[str]:
    """The names a target may take in ``module``: recipes first, then single steps."""
    found = [(k, v) for k, v in vars(module).items() if not k.startswith("_") and is_runnable(v)]
    recipes = [k for k, v in found if v.kind == "recipe"]
    return recipes + [k for k, v in found if v.kind != "recipe"]


def _listing(module: Any) -> str:
    """`` (recipes defined there: a, b; single steps: c)``: what the user may name."""
    names = _runnable(module)
    recipes = [k for k in names if vars(module)[k].kind == "recipe"]
    steps = [k for k in names if k not in recipes]
    listing = f" (recipes defined there: {', '.join(recipes) or 'none'}"
    return listing + (f"; single steps: {', '.join(steps)})" if steps else ")")
