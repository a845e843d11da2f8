"""The ``ninja`` console script sets the collector up before the command line loads."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from shinobi.cli.collector import THRESHOLDS


def test_the_console_scripts_are_the_console_module() -> None:
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    scripts = project["project"]["scripts"]
    assert scripts == {"ninja": "shinobi.cli.console:main", "shinobi": "shinobi.cli.console:main"}


def test_click_loads_under_the_command_thresholds() -> None:
    """Importing click (and what follows) is not walked by default-threshold collections."""
    code = (
        "import builtins, gc, sys\n"
        "seen = {}\n"
        "real = builtins.__import__\n"
        "def spy(name, *args, **kwargs):\n"
        "    if name == 'click' and name not in seen:\n"
        "        seen[name] = gc.get_threshold()\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = spy\n"
        "sys.argv = ['ninja', '--version']\n"
        "from shinobi.cli.console import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('CLICK', seen['click'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"CLICK {THRESHOLDS}" in proc.stdout, proc.stdout


def test_python_m_runs_the_same_command_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "shinobi.cli", "run", "missing.py:x"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "ninja: error: recipe file 'missing.py' does not exist; check the path"
    )


@pytest.mark.parametrize(
    ("module", "argument"),
    [
        ("contextlib", "runs"),  # the collector's first import
        ("click", "runs"),  # the command line's
        ("gettext", "--help"),  # the help's, without click (shinobi.cli.top_help)
    ],
)
def test_a_ctrl_c_while_ninja_loads_is_one_line_and_130(module: str, argument: str) -> None:
    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def interrupted(name, *args, **kwargs):\n"
        f"    if name == {module!r}:\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        f"sys.modules.pop({module!r}, None)\n"
        f"sys.argv = ['ninja', {argument!r}]\n"
        "from shinobi.cli.console import main\n"
        "builtins.__import__ = interrupted\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "ninja: interrupted while starting; nothing was run\n"


def test_what_loads_before_the_ctrl_c_guard_is_only_the_package_shells() -> None:
    """The ``ninja`` script imports shinobi, shinobi.cli and this module before
    ``main`` can turn a Ctrl-C into one line: none of them may load typing (9 ms
    here, the bulk of that window) or anything heavier."""
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import shinobi.cli.console\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stdout.split()
    heavy = {"typing", "re", "enum", "collections", "contextlib", "pathlib", "click", "pydantic"}
    assert heavy.isdisjoint(loaded), loaded


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--version"], "shinobi, version "),
        (["run", "nowhere.py:r"], "shinobi: error: recipe file 'nowhere.py' does not exist"),
        (["backends", "--bogus"], "(see 'shinobi backends --help')"),
    ],
)
def test_called_as_shinobi_it_names_itself_so(tmp_path: Path, args: list[str], said: str) -> None:
    """docs/cli.md: where the ``ninja`` build tool took the name, the program is
    ``shinobi``; its messages said ``ninja``, and ``ninja ... --help`` ran the
    build tool."""
    code = (
        "import sys\n"
        f"sys.argv = ['/somewhere/bin/shinobi', *{args!r}]\n"
        "from shinobi.cli.console import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert said in proc.stdout + proc.stderr
    assert "ninja" not in proc.stdout + proc.stderr
