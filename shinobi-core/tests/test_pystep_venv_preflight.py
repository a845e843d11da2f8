"""A pystep's venv of a Python it cannot run under is refused before anything runs.

The pre-flight checked only that the venv and its python were there, so a
venv of Python 3.10 (or of another version than ninja's, without shinobi and
pydantic of its own) passed it and ``--dryrun``; the step then failed once
it started, after the steps upstream of it had run.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

Ninja = Callable[..., subprocess.CompletedProcess[str]]

RECIPE = """
from pathlib import Path
import shinobi
from shinobi import Recipe


@shinobi.pystep
def upstream() -> int:
    Path("upstream-ran").write_text("yes")
    return 1


@shinobi.pystep(venv="ve")
def downstream(x: int) -> int:
    return x


recipe = Recipe("r")
recipe.add_step("u", upstream)
recipe.add_step("s", downstream, x=recipe.outputs.u.result)
"""


def _fake_venv(where: Path, version: str, python: str | None = None) -> Path:
    """A venv directory whose pyvenv.cfg names ``version``; its python is ``python``
    (a shell script), or this interpreter."""
    (where / "bin").mkdir(parents=True)
    (where / "pyvenv.cfg").write_text(f"home = /nowhere\nversion = {version}\n")
    target = where / "bin" / "python3"
    if python is None:
        target.symlink_to(sys.executable)
    else:
        target.write_text(python)
        target.chmod(0o755)
    return where


@pytest.mark.parametrize("dry", [True, False])
def test_a_venv_of_a_python_too_old_is_refused_before_the_run(
    ninja: Ninja, recipe_file: Callable[[str], Path], tmp_path: Path, dry: bool
) -> None:
    recipe_file(RECIPE)
    _fake_venv(tmp_path / "ve", "3.10.13")
    done = ninja("run", "recipe.py:recipe", *(["--dryrun"] if dry else []))
    assert done.returncode == 2, done.stderr
    assert (
        f"step 's': the venv '{tmp_path / 've'}' is Python 3.10, and a @pystep needs Python"
        " 3.11 or newer" in done.stderr
    )
    assert not (tmp_path / "upstream-ran").exists()


def test_a_venv_of_another_version_without_shinobi_is_refused_before_the_run(
    ninja: Ninja, recipe_file: Callable[[str], Path], tmp_path: Path
) -> None:
    recipe_file(RECIPE)
    major, minor = sys.version_info[:2]
    # this Python without its site directory: no shinobi, no pydantic
    bare = f'#!/bin/sh\nexec {sys.executable} -I -S "$@"\n'
    _fake_venv(tmp_path / "ve", f"{major}.{minor + 1}.0", bare)
    done = ninja("run", "recipe.py:recipe")
    assert done.returncode == 2, done.stderr
    assert f"is Python {major}.{minor + 1} and has no shinobi or pydantic of its own" in done.stderr
    assert not (tmp_path / "upstream-ran").exists()


def test_the_version_is_read_from_pyvenv_cfg_or_asked_of_the_python(tmp_path: Path) -> None:
    from shinobi.backends.venv import venv_python_version

    uv = tmp_path / "uv"
    uv.mkdir()
    (uv / "pyvenv.cfg").write_text("home = /x\nimplementation = CPython\nversion_info = 3.12.1\n")
    assert venv_python_version(str(uv)) == (3, 12, 1)
    # no pyvenv.cfg (an old virtualenv's): its python is asked
    old = tmp_path / "old"
    (old / "bin").mkdir(parents=True)
    (old / "bin" / "python3").symlink_to(sys.executable)
    assert venv_python_version(str(old)) == tuple(sys.version_info[:3])
    assert venv_python_version(str(old), ask=False) is None
