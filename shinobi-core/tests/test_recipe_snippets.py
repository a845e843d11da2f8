"""The snippets of docs/recipes.md run against the wsclean cab of docs/cabs.md."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"

#: What the snippets take from the page around them: a recipe with an ``ms``
#: input, and the names they use unimported.
PREAMBLE = """\
import shinobi
from pydantic import BaseModel
from shinobi import Recipe
from shinobi.resources import Resources
from shinobi.steps import MS


class RIn(BaseModel):
    ms: MS


class ROut(BaseModel):
    pass


recipe = Recipe("r", RIn, ROut)
"""

#: A stand-in wsclean: writes ``NAME-image.fits`` for ``-name NAME``, failing its
#: first call when asked to (to exercise the orchestration snippet's retry).
STUB = """\
#!/bin/sh
while [ "$#" -gt 0 ]; do
  case "$1" in -name) name="$2"; shift ;; esac
  shift
done
if [ -n "$FAIL_ONCE" ] && [ ! -e "$FAIL_ONCE" ]; then : > "$FAIL_ONCE"; echo first try fails >&2; exit 3; fi
: > "$name-image.fits"
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def _block(page: str, heading: str) -> str:
    """The first python block under ``heading`` of docs/``page``."""
    section = f"\n{(DOCS / page).read_text()}".split(f"\n{heading}\n", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, heading
    return found.group(1)


def _module(tmp_path: Path, snippet: str) -> Path:
    cab = _block("cabs.md", "# Cabs: describing a tool")
    path = tmp_path / "snip.py"
    path.write_text(f"{cab}\n{PREAMBLE}\n{snippet}")
    (tmp_path / "obs.ms").mkdir()
    tool = tmp_path / "bin" / "wsclean"
    tool.parent.mkdir()
    tool.write_text(STUB)
    tool.chmod(0o755)
    return path


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", **extra}


def test_the_resources_snippet_runs(ninja: Ninja, tmp_path: Path) -> None:
    """It wired no ``prefix``, which the cab requires for its ``restored`` output."""
    path = _module(tmp_path, _block("recipes.md", "## Declaring what a step costs"))
    proc = ninja("run", f"{path}:recipe", "--ms", "obs.ms", env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "deep-image.fits").exists()


def test_the_orchestration_snippet_runs_and_retries(ninja: Ninja, tmp_path: Path) -> None:
    path = _module(tmp_path, _block("recipes.md", "## Orchestration functions"))
    env = _env(tmp_path, FAIL_ONCE=str(tmp_path / "failed-once"))
    proc = ninja("run", f"{path}:recipe", "--ms", "obs.ms", env=env)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "failed-once").exists()  # the first ctx.run() failed, the retry ran
    assert (tmp_path / "retried-image.fits").exists()
