"""The module names recipe files are imported under, and how another process finds them.

A recipe file is imported by path, with no package around it. Python's
multiprocessing with the ``spawn`` or ``forkserver`` start method (macOS's
default, and Linux's from Python 3.14) sends a worker the function it runs
by module name, and the worker imports that name afresh: under a made-up
top-level name the import failed, the worker died, and a pystep's
``Pool.map`` waited for it forever.

So a recipe module is named ``shinobi.recipe_modules.<file's stem>_<digest
of its path>`` (``shinobi.recipe_modules.pipeline_3fa9c1d2e4b5``: readable
in a traceback or a class's repr). A worker importing that imports shinobi
first (this module poses as a package for that), whose import puts
:class:`RecipeFinder` on ``sys.meta_path``; the finder looks for the file on
``sys.path``, which the worker has from its parent and which holds the
recipe's directory (the loader adds it), and takes the one whose path has
that digest. It works whatever the worker's main module (the ``ninja``
script, ``python -m shinobi.cli``, the pystep runner), wherever shinobi can
be imported.
"""

from __future__ import annotations

import os
import sys

#: typing.TYPE_CHECKING, without importing typing: see shinobi/__init__.py.
TYPE_CHECKING = False

if TYPE_CHECKING:  # not imported for it: `import shinobi` imports this module
    from pathlib import Path
    from typing import Any

__all__ = ["PREFIX", "RecipeFinder", "install", "is_recipe_module", "module_name", "path_of"]

#: What every recipe module's name starts with.
PREFIX = f"{__name__}."

#: A package's, so that ``shinobi.recipe_modules.<name>`` is looked up by the
#: finders (none of which finds anything in no directory but :class:`RecipeFinder`).
__path__: list[str] = []

#: Hex digits of the path's digest a name carries: enough that two recipe files
#: of one stem never meet, short enough to read past.
_DIGITS = 12


def module_name(path: Path) -> str:
    """The name the recipe file at ``path`` is imported under."""
    resolved = os.path.realpath(path)
    return f"{PREFIX}{_stem(os.path.basename(resolved))}_{_digest(resolved)}"


def is_recipe_module(name: str) -> bool:
    """Whether ``name`` is a recipe module's (without looking for its file)."""
    return name.startswith(PREFIX)


def path_of(name: str) -> str | None:
    """The recipe file a recipe module's name names, found on ``sys.path``; None if
    ``name`` is none, or no file on the path has its stem and digest."""
    if not is_recipe_module(name):
        return None
    stem, sep, digest = name[len(PREFIX) :].rpartition("_")
    if not sep or len(digest) != _DIGITS:
        return None
    for entry in list(sys.path):
        directory = os.path.abspath(entry or os.curdir)
        try:
            names = os.listdir(directory)
        except OSError:  # a zip, a directory gone
            continue
        for file_name in names:
            if file_name.endswith(".py") and _stem(file_name) == stem:
                full = os.path.realpath(os.path.join(directory, file_name))
                if _digest(full) == digest:
                    return full
    return None


def _stem(file_name: str) -> str:
    """A file's name without ``.py``, every character a module name cannot hold as ``_``."""
    stem = file_name.removesuffix(".py")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in stem) or "_"


def _digest(path: str) -> str:
    import hashlib

    return hashlib.sha256(os.fsencode(path)).hexdigest()[:_DIGITS]


class RecipeFinder:
    """Finds a recipe module by its name, in a process that did not import it."""

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> Any:
        file = path_of(name)
        if file is None:
            return None
        import importlib.util

        return importlib.util.spec_from_file_location(name, file)


def install() -> None:
    """Put :class:`RecipeFinder` on ``sys.meta_path`` (once), after every other finder."""
    if RecipeFinder not in sys.meta_path:
        sys.meta_path.append(RecipeFinder)
