"""Declarations the venv backend and the budget took silently, then failed on late.

``Resources(memory=16)`` was 16 bytes (a container refused it mid-run, Slurm
made it ``--mem=1M``); the configuration already refused such a budget.
``ninja backends`` judged a venv by its pip, which ``uv venv`` does not install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi.backends.venv import VenvBackend
from shinobi.resources import Resources

Ninja = Callable[..., subprocess.CompletedProcess[str]]


@pytest.mark.parametrize("memory", [16, "1.5", 1.5, 1024**2 - 1])
def test_a_memory_written_without_its_unit_is_refused(memory: object) -> None:
    with pytest.raises(ValueError, match="too small to be meant") as caught:
        Resources(memory=memory)  # type: ignore[arg-type]
    assert f"Resources(memory={memory!r})" in str(caught.value)
    assert "write the unit" in str(caught.value)


@pytest.mark.parametrize("memory", [1024**2, "1MiB", "1.5MiB", "64GiB"])
def test_a_memory_of_a_mib_or_more_is_taken(memory: object) -> None:
    assert Resources(memory=memory).memory is not None  # type: ignore[arg-type]


def test_a_unitless_memory_stops_the_run_where_it_is_declared(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    recipe_file(
        """
        from shinobi.steps import Cab, Recipe
        from shinobi.resources import Resources
        recipe = Recipe("pipe")
        recipe.add_step("big", Cab("t", ["/bin/touch", "RAN"]), resources=Resources(memory=16))
        """
    )
    done = ninja("run", "recipe.py:recipe", "--dry-run")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1, done.stderr
    assert "16 bytes is too small to be meant" in done.stderr
    assert 'add_step("big"' in done.stderr
    assert "mem=16B" not in done.stdout


def _pipless_venv(venv: Path) -> None:
    """A venv as ``uv venv`` makes it: a ``pyvenv.cfg``, ``bin/python`` and the
    installed tools' console scripts, but no ``bin/pip``."""
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\nuv = 0.13.9\n")
    os.symlink(sys.executable, venv / "bin" / "python")
    (venv / "bin" / "activate").write_text("# no #! line: sourced, not run\n")
    for name, text in (
        ("tabulate", f"#!{venv}/bin/python\nprint('hi')\n"),
        ("helper", "#!/bin/sh\necho hi\n"),  # not a console script: not judged
    ):
        (venv / "bin" / name).write_text(text)
        (venv / "bin" / name).chmod(0o755)


def test_ninja_backends_says_a_copied_venv_without_pip_is_not_ready(tmp_path: Path) -> None:
    """``ninja backends`` read bin/pip only, so a copied ``uv venv`` was "ready"
    and the run then refused its every tool."""
    original = tmp_path / "vA"
    _pipless_venv(original)
    sound = VenvBackend({"venv": str(original)}).check()
    assert sound.usable, sound.detail
    copy = tmp_path / "vMoved"
    shutil.copytree(original, copy, symlinks=True)
    copied = VenvBackend({"venv": str(copy)}).check()
    assert not copied.usable
    assert f"would run in another venv: its #! line names {original}/bin/python" in copied.detail
    shutil.rmtree(original)
    moved = VenvBackend({"venv": str(copy)}).check()
    assert not moved.usable
    assert "which does not exist" in moved.detail


@pytest.mark.parametrize(
    "declared",
    [
        'recipe.add_step("cal", Cab("t", ["tabulate"]), venv="VENV", backend="native")',
        '@shinobi.pystep(venv="VENV", backend="native")\ndef cal() -> None:\n    pass\n'
        'recipe.add_step("cal", cal)',
        '@shinobi.pystep(venv="VENV")\ndef cal() -> None:\n    pass\n'
        'recipe.add_step("cal", cal, backend="native")',
    ],
)
def test_a_venv_with_backend_native_is_said_to_be_ignored(
    declared: str, ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    """Such a step ran without its venv, silently, and failed with
    ModuleNotFoundError or "command not found"."""
    head = "import shinobi\nfrom shinobi.steps import Cab, Recipe\nrecipe = Recipe('pipe')\n"
    recipe_file(head + declared.replace("VENV", str(tmp_path / "v")) + "\n")
    done = ninja("run", "recipe.py:recipe", "--dry-run")
    assert done.returncode == 0, (done.stdout, done.stderr)
    said = [line for line in done.stderr.splitlines() if "venv is ignored" in line]
    assert len(said) == 1, done.stderr
    assert "step 'cal'" in said[0] and "backend 'native'" in said[0]


def _advice(venv: Path) -> str:
    """What the venv backend says of a step whose command ``venv`` lacks."""
    from shinobi.backends.base import Invocation
    from shinobi.backends.venv import VenvError

    step = Invocation(step="cal", argv=("no-such-tool-x",), cwd=str(venv), venv=str(venv))
    with pytest.raises(VenvError) as caught:
        VenvBackend({}).prepare([step])
    return str(caught.value)


def test_the_advice_for_a_missing_command_installs_with_what_the_venv_has(
    tmp_path: Path,
) -> None:
    """It said ``VENV/bin/pip install ...`` of a ``uv venv``, which has no pip."""
    venv = tmp_path / "v"
    _pipless_venv(venv)
    python = venv / "bin" / "python"
    assert f"(uv pip install --python {python} ...)" in _advice(venv)
    (venv / "lib" / "python3.11" / "site-packages" / "pip").mkdir(parents=True)
    assert f"({python} -m pip install ...)" in _advice(venv)
    (venv / "bin" / "pip").write_text(f"#!{python}\n")
    (venv / "bin" / "pip").chmod(0o755)
    assert f"({venv}/bin/pip install ...)" in _advice(venv)
