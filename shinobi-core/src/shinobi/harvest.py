"""What a ``harvest`` glob matches: every path but the parts an interrupt set aside.

An interrupted step's half-written output is renamed ``NAME.interrupted``
(``-2``, ``-3``... when an earlier one is there) so that nothing takes it for
a finished product; a glob such as ``img-*`` matches that name too, and would
hand the part downstream and into the step cache all the same.
"""

from __future__ import annotations

import glob
import os
import re

__all__ = ["SET_ASIDE_SUFFIX", "anchored", "harvest", "is_set_aside"]

#: What an interrupted step's part is renamed with (see shinobi.interrupted_outputs).
SET_ASIDE_SUFFIX = ".interrupted"

_SET_ASIDE = re.compile(re.escape(SET_ASIDE_SUFFIX) + r"(?:-[0-9]+)?$")


def is_set_aside(path: str) -> bool:
    """Whether ``path`` is the name an interrupt gives a part it moves aside."""
    return _SET_ASIDE.search(path) is not None


def harvest(pattern: str) -> list[str]:
    """The paths ``pattern`` matches, sorted, less the parts set aside; ``**`` is any
    depth of directories (none included), or ``out/**/*.fits`` would miss all but
    one level of a product tree.

    A part set aside may be a directory (``out/scan2.interrupted``): what a
    glob reaches inside it is as unfinished as the directory. Only the part
    of a path the pattern's wildcards matched is looked at, so a project
    folder the user named ``*.interrupted`` does not hide every product.
    """
    fixed = _literal_components(pattern)
    return sorted(
        path
        for path in glob.glob(pattern, recursive=True)
        if not any(is_set_aside(part) for part in path.split(os.sep)[fixed:])
    )


def _literal_components(pattern: str) -> int:
    """How many leading components of ``pattern`` hold no wildcard."""
    parts = pattern.split(os.sep)
    return next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts) - 1)


def anchored(directory: str, pattern: str) -> str:
    """``pattern`` (relative to ``directory``, or absolute) as one glob, the
    directory's own name taken literally: a project in ``obs [1]`` or ``run*``
    must not make its harvest match nothing, or another folder's files."""
    return os.path.join(glob.escape(directory), pattern)
