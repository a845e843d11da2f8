"""A recipe file that cannot be read, or that moves ninja's directory as it is
imported, is refused in words that name the fix.

``os.chdir(os.path.dirname(__file__))`` at the top of a script moved
``.shinobi/`` and every relative path of the run, silently: ``ninja runs``
where the user started found nothing. An unreadable file said ``raised
PermissionError: [Errno 13]`` as if the recipe's own code had.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi.errors import LoadError
from shinobi.loaders import load_target

MOVES = """
import os
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sub"))
from shinobi.steps import Cab
ec = Cab(name="ec", command="/bin/echo")
"""


def test_a_recipe_that_changes_directory_at_import_is_refused_and_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "moves.py").write_text(MOVES)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LoadError) as info:
        load_target("moves.py:ec")
    assert f"changed the working directory (to {tmp_path / 'sub'})" in str(info.value)
    assert "run it from there" in str(info.value)
    assert os.getcwd() == str(tmp_path)


def test_it_is_loaded_where_it_leaves_the_directory_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "moves.py").write_text(MOVES)
    monkeypatch.chdir(tmp_path / "sub")
    assert load_target("../moves.py:ec").name == "ec"


def test_the_command_line_says_it_in_one_line(
    tmp_path: Path, ninja: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "moves.py").write_text(MOVES)
    proc = ninja("run", "moves.py:ec")
    assert proc.returncode == 2
    assert proc.stderr.startswith("ninja: error: moves.py: importing the recipe file changed")
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "sub" / ".shinobi").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run ninja as another user")
def test_an_unreadable_recipe_file_says_so() -> None:
    folder = Path(tempfile.mkdtemp())  # pytest's own is closed to other users
    folder.chmod(0o755)
    recipe = folder / "secret.py"
    recipe.write_text("from shinobi.steps import Cab\nec = Cab(name='ec', command='/bin/echo')\n")
    recipe.chmod(0o600)
    script = f"from shinobi.loaders import load_target\nload_target({str(recipe)!r} + ':ec')"
    proc = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            sys.executable,
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        cwd="/",
    )
    shutil.rmtree(folder)
    assert "cannot be read (permission denied); fix its permissions" in proc.stderr, proc.stderr
