"""The collector policy and exit hook of ``ninja``: exit is fast, garbage is still finalised."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shinobi.cli import collector
from shinobi.cli import main as cli_main


def test_the_exit_hook_is_registered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    registered: list[Callable[..., Any]] = []
    monkeypatch.setattr(cli_main, "_exit_hook_registered", False)
    monkeypatch.setattr(cli_main.atexit, "register", registered.append)
    for _ in range(2):
        cli_main.main(["--help"])
    assert registered == [collector.at_exit]


_CYCLE = (
    "import gc, sys\n"
    "from shinobi.cli import collector\n"
    "from shinobi.cli.main import main\n"
    "class Cycle:\n"
    "    def __del__(self):\n"
    "        sys.stdout.write('finalised\\n')\n"
    "        sys.stdout.flush()\n"
    "{before}\n"
    "a = Cycle()\n"
    "a.me = a\n"
    "del a\n"
    "{then}\n"
)


@pytest.mark.parametrize(
    ("before", "then", "printed"),
    [
        # left for the interpreter's exit, after a command ran
        ("pass", "main(['--help'])", "finalised\n"),
        # the exit hook itself, with the collector off as it is while ninja builds
        ("gc.disable()", "collector.at_exit(); print('after')", "finalised\nafter\n"),
    ],
)
def test_cyclic_garbage_is_still_finalised_at_exit(before: str, then: str, printed: str) -> None:
    code = _CYCLE.format(before=before, then=then)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(printed)


COLLECTOR_RECIPE = """
import gc
from pathlib import Path
import shinobi
from shinobi import Recipe

Path("at-load").write_text(str(gc.isenabled()))


@shinobi.pystep()
def note(path: Path) -> None:
    path.write_text(str(gc.isenabled()))


recipe = Recipe("r")
recipe.add_step("note", note, path=Path("in-step"))
"""


def test_the_collector_is_off_while_building_and_on_while_steps_run(
    ninja: Any, recipe_file: Callable[[str], Path], tmp_path: Path
) -> None:
    recipe_file(COLLECTOR_RECIPE)
    done = ninja("run", "recipe.py:recipe")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "at-load").read_text() == "False"
    assert (tmp_path / "in-step").read_text() == "True"


@pytest.mark.parametrize("on", [True, False])
def test_main_leaves_the_collector_as_it_found_it(on: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if on else gc.disable)()
        cli_main.main(["--help"])
        assert gc.isenabled() is on
    finally:
        (gc.enable if was else gc.disable)()
