"""The module names recipe files are imported under, and how another process finds them.

A recipe file is imported by path, with no package around it. Python's
multiprocessing with the ``spawn`` or ``forkserver`` start method (macOS's
default, and Linux's from Python 3.14) sends a worker the function it runs
by module name, and the worker imports that name afresh: under a made-up
top-level name the import failed, the worker died, and a pystep's
``Pool.map`` waited for it forever.

So a recipe module is named ``shinobi.recipe_modules.f<path, hex-encoded>``:
a worker importing it imports shinobi first (this module poses as a package
for that), whose import puts :class:`RecipeFinder` on ``sys.meta_path``, and
the finder reads the file's path back from the name. It works whatever the
worker's main module is (the ``ninja`` script, ``python -m shinobi.cli``, the
pystep runner), wherever shinobi can be imported.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # not imported for it: `import shinobi` imports this module
    from pathlib import Path

__all__ = ["PREFIX", "RecipeFinder", "install", "module_name", "path_of"]

#: What every recipe module's name starts with.
PREFIX = f"{__name__}.f"

#: A package's, so that ``shinobi.recipe_modules.f...`` is looked up by the finders
#: (none of which finds anything in no directory but :class:`RecipeFinder`).
__path__: list[str] = []


def module_name(path: Path) -> str:
    """The name the recipe file at ``path`` is imported under (it names the file)."""
    return PREFIX + os.fsencode(path.resolve()).hex()


def path_of(name: str) -> str | None:
    """The file a recipe module's name names; None for any other name."""
    if not name.startswith(PREFIX):
        return None
    try:
        return os.fsdecode(bytes.fromhex(name[len(PREFIX) :]))
    except ValueError:
        return None


class RecipeFinder:
    """Finds a recipe module by its name, in a process that did not import it."""

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> Any:
        file = path_of(name)
        if file is None or not os.path.isfile(file):
            return None
        import importlib.util

        return importlib.util.spec_from_file_location(name, file)


def install() -> None:
    """Put :class:`RecipeFinder` on ``sys.meta_path`` (once), after every other finder."""
    if RecipeFinder not in sys.meta_path:
        sys.meta_path.append(RecipeFinder)
