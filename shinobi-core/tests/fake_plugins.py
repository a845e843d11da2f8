"""Fake plugin distributions, installed where a fresh ``ninja`` finds them.

A dist-info folder and its modules go into a directory that a fresh
interpreter puts first on ``sys.path``, as a user's ``pip install`` of a
third-party plugin would leave them; ``ninja`` then runs there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["BACKEND", "DEMO", "install", "ninja"]

#: The demo recipe of the README: every plugin test runs it on the plugin.
DEMO = Path(__file__).resolve().parents[2] / "examples" / "offload_demo.py"

#: A backend module that imports and loads (and would fail any step it ran).
BACKEND = (
    "from shinobi.backends.base import Backend as _Base\n"
    "class Backend(_Base):\n"
    "    name = 'x'\n"
    "    def run(self, invocation, control):\n"
    "        raise RuntimeError\n"
)


def install(
    site: Path,
    dist: str,
    entry_points: str,
    modules: dict[str, str],
    requires: tuple[str, ...] = (),
) -> None:
    """Install ``dist`` 1.0 into ``site``: its entry points, modules and requirements."""
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {dist}", "Version: 1.0"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    (info / "entry_points.txt").write_text(entry_points)
    for name, text in modules.items():
        (site / name).write_text(text)


def ninja(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``ninja ARGS`` in a fresh interpreter that finds what ``site`` holds."""
    code = (
        f"import sys\nsys.path.insert(0, {str(site)!r})\nsys.argv = ['ninja', *{list(args)!r}]\n"
        "from shinobi.cli.console import main\nmain()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
