"""A venv that used to work and no longer does is named as broken, with a remedy that works.

``python3 -m venv DIR`` over a venv whose ``bin/python`` link dangles (its
Python was upgraded or removed) leaves the link dangling, so the remedy is
``--clear``; a venv whose creation was interrupted has ``pyvenv.cfg`` and no
Python. A venv moved elsewhere keeps its interpreter, but its console scripts
still name the old path on their ``#!`` line: refused before the run.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from shinobi.backends.base import Invocation
from shinobi.backends.venv import VenvBackend, VenvError, venv_problem


def _invocation(cwd: Path, venv: Path, *argv: str) -> Invocation:
    return Invocation(step="cal", argv=argv, cwd=str(cwd), venv=str(venv))


def test_a_venv_whose_python_is_gone_is_broken_and_needs_clear(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /opt/python3.9/bin\n")
    os.symlink("/opt/python3.9/bin/python3.9", venv / "bin" / "python")
    os.symlink("python", venv / "bin" / "python3")
    problem = venv_problem(str(venv)) or ""
    assert "/opt/python3.9/bin/python3.9 no longer exists" in problem
    assert f"python3 -m venv --clear {venv}" in problem


def test_a_half_made_venv_is_incomplete_and_needs_clear(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    problem = venv_problem(str(venv)) or ""
    assert "incomplete" in problem and "--clear" in problem


def test_a_plain_directory_is_still_not_a_virtualenv(tmp_path: Path) -> None:
    assert "is not a virtualenv" in (venv_problem(str(tmp_path)) or "")


def test_a_venvs_bin_directory_is_told_to_name_the_venv(tmp_path: Path) -> None:
    """It said to make a venv inside that bin with `python3 -m venv VENV/bin`."""
    import subprocess
    import sys

    venv = tmp_path / "ve"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    assert venv_problem(str(venv / "bin")) == (
        f"{str(venv / 'bin')!r} is the bin directory of the virtualenv {str(venv)!r};"
        f" name {str(venv)!r} itself"
    )
    assert venv_problem(str(venv / "bin") + "/") is not None


def _script_beside_python(root: Path, name: str, text: str) -> Path:
    """``root/bin/NAME`` holding ``text``, executable, beside a ``bin/python``."""
    (root / "bin").mkdir(parents=True)
    os.symlink(sys.executable, root / "bin" / "python")
    script = root / "bin" / name
    script.write_text(text)
    script.chmod(0o755)
    return script


def test_a_moved_venv_s_tool_is_refused_before_the_run(tmp_path: Path) -> None:
    venv = tmp_path / "moved"
    _script_beside_python(venv, "tricolour", "#!/old/place/venv/bin/python\nprint('hi')\n")
    with pytest.raises(VenvError, match="#! line names /old/place/venv/bin/python"):
        VenvBackend({}).prepare([_invocation(tmp_path, venv, "tricolour")])


def test_a_sound_venv_tool_is_accepted(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    os.symlink(sys.executable, venv / "bin" / "python")
    tool = venv / "bin" / "tricolour"
    tool.write_text(f"#!{venv}/bin/python\nprint('hi')\n")
    tool.chmod(0o755)
    assert VenvBackend({}).prepare([_invocation(tmp_path, venv, "tricolour")]) == []


def _fake_venv(venv: Path) -> Path:
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    os.symlink(sys.executable, venv / "bin" / "python")
    tool = venv / "bin" / "tricolour"
    tool.write_text(f"#!{venv}/bin/python\nprint('hi')\n")
    tool.chmod(0o755)
    return tool


def test_a_copied_venv_s_tool_is_refused_as_running_in_the_original(tmp_path: Path) -> None:
    """The copy's scripts start, but under the original's interpreter and packages."""
    original = tmp_path / "original"
    _fake_venv(original)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    with pytest.raises(VenvError) as caught:
        VenvBackend({}).prepare([_invocation(tmp_path, copy, "tricolour")])
    said = str(caught.value)
    assert f"would run in another venv: its #! line names {original}/bin/python" in said
    assert f"python3 -m venv --clear {copy}" in said
    linked = tmp_path / "linked"
    linked.symlink_to(original)  # the same venv by another name is still itself
    assert VenvBackend({}).prepare([_invocation(tmp_path, linked, "tricolour")]) == []


def test_another_venv_s_tool_named_by_its_path_runs_as_written(tmp_path: Path) -> None:
    """A cab may name another venv's tool by its path (a CASA venv's, beside the
    step's own): that is the author's explicit choice, as any path is, not a
    copied venv of the step's to refuse."""
    casa = _fake_venv(tmp_path / "casa")
    _fake_venv(tmp_path / "venv")
    invocation = _invocation(tmp_path, tmp_path / "venv", str(casa))
    assert VenvBackend({}).prepare([invocation]) == []


def test_a_copied_venv_s_sh_launcher_is_refused_as_running_in_the_original(
    tmp_path: Path,
) -> None:
    """pip writes a ``/bin/sh`` launcher instead of a ``#!`` line when the venv's
    path has a space (or is too long): its second line names the Python."""
    original = tmp_path / "original venv ü"
    tool = _fake_venv(original)
    tool.write_text(
        f"#!/bin/sh\n'''exec' \"{original}/bin/python\" \"$0\" \"$@\"\n' '''\nprint('hi')\n"
    )
    assert VenvBackend({}).prepare([_invocation(tmp_path, original, "tricolour")]) == []
    copy = tmp_path / "copy of venv"
    shutil.copytree(original, copy, symlinks=True)
    with pytest.raises(VenvError) as caught:
        VenvBackend({}).prepare([_invocation(tmp_path, copy, "tricolour")])
    assert f"would run in another venv: its #! line names {original}/bin/python" in str(
        caught.value
    )


def test_ninja_backends_says_a_copied_or_moved_venv_is_not_ready(tmp_path: Path) -> None:
    """``ninja backends`` said "ready" of a venv whose every tool a run then refused."""
    original = tmp_path / "original"
    tool = _fake_venv(original)
    shutil.copy(tool, original / "bin" / "pip")  # pip's script: what the check reads
    (original / "bin" / "activate").write_text("# no #! line: sourced, not run\n")
    sound = VenvBackend({"venv": str(original)}).check()
    assert sound.usable and sound.detail == f"ready; backend.venv is {original}"
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    copied = VenvBackend({"venv": str(copy)}).check()
    assert not copied.usable
    assert f"would run in another venv: its #! line names {original}/bin/python" in copied.detail
    shutil.rmtree(original)  # now the copy's scripts name a Python that is gone
    moved = VenvBackend({"venv": str(copy)}).check()
    assert not moved.usable
    assert f"its #! line names {original}/bin/python, which does not exist" in moved.detail


#: uv's launcher in a --relocatable venv: it works its Python out as it runs.
RELOCATABLE = (
    "#!/bin/sh\n"
    """'''exec' "$(dirname -- "$(realpath -- "$0")")"/'python' "$0" "$@"\n"""
    "' '''\n"
    "print('hi')\n"
)


def test_ninja_backends_and_a_run_accept_venvs_whose_scripts_it_cannot_judge(
    tmp_path: Path,
) -> None:
    """A relocatable venv and an installed Python (pyenv's, no pyvenv.cfg) were
    called moved, with a fix that would have wiped the installed Python."""
    relocatable = tmp_path / "relo"
    tool = _fake_venv(relocatable)
    tool.write_text(RELOCATABLE)
    shutil.copy(tool, relocatable / "bin" / "pip")
    assert VenvBackend({"venv": str(relocatable)}).check().usable
    assert VenvBackend({}).prepare([_invocation(tmp_path, relocatable, "tricolour")]) == []
    installed = tmp_path / "pyenv-3.12"
    _script_beside_python(installed, "python3.12-gdb.py", "#!/usr/bin/no-such-python\n")
    assert VenvBackend({"venv": str(installed)}).check().usable


def test_a_copied_venv_chosen_at_run_time_fails_its_step_as_before_the_run(
    tmp_path: Path,
) -> None:
    """``ctx.run(backend="venv")`` with backend.venv a copy ran the original venv's
    tool, exit 0: the run-time check skipped the #! test the pre-flight makes."""
    import textwrap

    from shinobi.config import load_config
    from shinobi.loaders import load_target
    from shinobi.runner import run_recipe

    original = tmp_path / "original"
    _fake_venv(original)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    source = tmp_path / "steps.py"
    source.write_text(
        textwrap.dedent(
            """
            from pydantic import BaseModel
            import shinobi
            from shinobi import Recipe
            from shinobi.steps import Cab

            class Nothing(BaseModel):
                pass

            tool = Cab(name="tool", command="tricolour", inputs_model=Nothing,
                       outputs_model=Nothing)

            @shinobi.step(tool, backend="native")
            def orch(ctx):
                return ctx.run(backend="venv")

            recipe = Recipe("r", Nothing, Nothing)
            recipe.add_step("s", orch)
            """
        )
    )
    config = load_config({"cache.enabled": False, "backend.venv": str(copy)})
    result = run_recipe(load_target(f"{source}:recipe"), cwd=tmp_path, config=config)
    (step,) = result.steps
    assert step.status == "failed", step
    assert f"would run in another venv: its #! line names {original}/bin/python" in (
        step.error or ""
    ), step.error
