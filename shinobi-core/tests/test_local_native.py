"""A program the kernel will not start is reported as what is actually wrong.

"command not found ... is it on PATH?" for a script that is right there (its
``#!`` interpreter is what is missing: a moved venv, a removed Python) sends
the user looking for the wrong file; so does "permission denied" for a
directory, and "internal error: ValueError" for a NUL byte in an argument.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shinobi.backends.base import Invocation, RunControl
from shinobi.backends.native import NativeBackend
from shinobi.backends.process import run_process
from shinobi.errors import ShinobiError


def _script(path: Path, shebang: str) -> Path:
    path.write_text(f"#!{shebang}\necho hi\n")
    path.chmod(0o755)
    return path


def test_a_script_whose_interpreter_is_gone_names_the_interpreter(tmp_path: Path) -> None:
    _script(tmp_path / "tool.sh", "/no/such/venv/bin/python3")
    run = run_process(["./tool.sh"], cwd=str(tmp_path), control=RunControl())
    assert run.returncode == 127
    assert "/no/such/venv/bin/python3" in (run.reason or "")
    assert "/no/such/venv/bin/python3" in run.stderr
    assert "command not found" not in run.stderr


def test_a_bare_name_found_on_path_with_a_dead_interpreter_says_so(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _script(bin_dir / "quartical", "/moved/away/python")
    invocation = Invocation(
        step="cal",
        argv=("quartical",),
        cwd=str(tmp_path),
        env={"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    run = NativeBackend().run(invocation, RunControl())
    assert run.returncode == 127
    assert "/moved/away/python" in run.stderr and "#! line" in run.stderr


def test_a_missing_program_is_still_command_not_found(tmp_path: Path) -> None:
    run = run_process(["no-such-tool-audit9"], cwd=str(tmp_path), control=RunControl())
    assert run.returncode == 127 and "command not found" in run.stderr


def test_a_script_without_its_interpreter_line_is_told_to_add_one(tmp_path: Path) -> None:
    """The kernel's "Exec format error" alone did not say what to do."""
    script = tmp_path / "calibrate"
    script.write_text("echo calibrating\n")
    script.chmod(0o755)
    run = run_process(["./calibrate"], cwd=str(tmp_path), control=RunControl())
    assert run.returncode == 126
    assert "Exec format error; a script needs a #! line naming its interpreter" in run.stderr


def test_a_directory_is_not_called_a_permission_problem(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    run = run_process(["./tools"], cwd=str(tmp_path), control=RunControl())
    assert run.returncode == 126
    assert "is a directory" in run.stderr and "permission" not in run.stderr


def test_a_nul_byte_in_an_argument_is_a_user_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ShinobiError, match="argument 1 contains a NUL byte"):
        run_process(["/bin/echo", "nul\0byte"], cwd=str(tmp_path), control=RunControl())


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"THREADS": 4}, "'THREADS' = 4 is not text"),
        ({"X": "a\0b"}, "'X' contains a NUL byte"),
        ({"X=Y": "a"}, "'X=Y' is not a valid environment variable name"),
    ],
)
def test_a_cab_environment_no_process_can_have_is_named(
    tmp_path: Path, env: dict[str, object], said: str
) -> None:
    invocation = Invocation(step="s", argv=("/bin/true",), cwd=str(tmp_path), env=env)  # type: ignore[arg-type]
    with pytest.raises(ShinobiError, match=said):
        NativeBackend().run(invocation, RunControl())
