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


def test_a_programs_garbage_is_finalised_before_ninja_freezes_the_libraries(
    recipe_file: Callable[[str], Path], tmp_path: Path
) -> None:
    # A program that calls main() without argv hands ninja its process, heap
    # and all: what it left as garbage is collected before the libraries are
    # frozen (only the console script, which has run nothing yet, skips that).
    recipe_file(COLLECTOR_RECIPE)
    then = "sys.argv = ['ninja', 'run', 'recipe.py:recipe', '--dryrun']\nmain()"
    code = _CYCLE.format(before="gc.disable()", then=then)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("finalised\n"), proc.stdout


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


def test_code_of_the_users_runs_with_the_collector_on(
    ninja: Any, recipe_file: Callable[[str], Path], tmp_path: Path
) -> None:
    # The recipe module as it loads and the steps may make cyclic garbage of
    # any size: only shinobi's own building runs with the collector off.
    recipe_file(COLLECTOR_RECIPE)
    done = ninja("run", "recipe.py:recipe")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "at-load").read_text() == "True"
    assert (tmp_path / "in-step").read_text() == "True"


BUILDING_RECIPE = """
import gc
from pathlib import Path
from pydantic import BaseModel, field_validator
from shinobi import Recipe


class In(BaseModel):
    x: int = 1

    @field_validator("x")
    @classmethod
    def note(cls, value: int) -> int:  # validated while ninja builds the run
        Path("while-building").write_text(str(gc.isenabled()))
        return value


recipe = Recipe("r", In)
"""


@pytest.mark.parametrize("dryrun", [[], ["--dryrun"]])
def test_shinobi_builds_with_the_collector_off(
    ninja: Any, recipe_file: Callable[[str], Path], tmp_path: Path, dryrun: list[str]
) -> None:
    recipe_file(BUILDING_RECIPE)
    done = ninja("run", "recipe.py:recipe", "--x", "2", *dryrun)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "while-building").read_text() == "False"


def test_building_turns_the_collector_off_and_back_as_it_was() -> None:
    was = gc.isenabled()
    try:
        for on in (True, False):
            (gc.enable if on else gc.disable)()
            with collector.building():
                assert not gc.isenabled()
            assert gc.isenabled() is on
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("on", [True, False])
def test_main_leaves_the_collector_as_it_found_it(on: bool) -> None:
    was, threshold = gc.isenabled(), gc.get_threshold()
    try:
        (gc.enable if on else gc.disable)()
        gc.set_threshold(700, 10, 10)
        cli_main.main(["--help"])
        assert gc.isenabled() is on and gc.get_threshold() == (700, 10, 10)
    finally:
        (gc.enable if was else gc.disable)()
        gc.set_threshold(*threshold)


def test_freezing_what_is_built_does_not_keep_garbage() -> None:
    code = (
        "import gc, sys\n"
        "from shinobi.cli import collector\n"
        "class Cycle:\n"
        "    def __del__(self):\n"
        "        print('finalised')\n"
        "gc.disable()\n"
        "a = Cycle()\n"
        "a.me = a\n"
        "del a\n"
        "gc.enable()\n"
        "collector.command_started(own_process=True)\n"
        "with collector.building():\n"
        "    built = [[] for _ in range(1000)]\n"
        "    b = Cycle()\n"  # a validator of the user's runs while shinobi builds
        "    b.me = b\n"
        "    del b\n"
        "print('frozen', gc.get_freeze_count() >= 1000)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "finalised\nfinalised\nfrozen True\n"


LOADING_RECIPE = """
import gc
from pathlib import Path
import shinobi
from shinobi import Recipe


class Cycle:
    def __del__(self):
        Path("finalised").write_text("yes")


Path("frozen-at-load").write_text(str(gc.get_freeze_count()))
made = Cycle()
made.me = made
del made  # cyclic garbage of the user's, made once the libraries are frozen


@shinobi.pystep()
def note(path: Path) -> None:
    path.write_text("ran")


recipe = Recipe("r")
recipe.add_step("note", note, path=Path("in-step"))
"""


def test_the_libraries_are_frozen_before_the_recipe_module_runs(
    ninja: Any, recipe_file: Callable[[str], Path], tmp_path: Path
) -> None:
    # Frozen after the recipe module had run, its garbage would never be finalised.
    recipe_file(LOADING_RECIPE)
    done = ninja("run", "recipe.py:recipe")
    assert done.returncode == 0, done.stderr
    assert int((tmp_path / "frozen-at-load").read_text()) > 10_000  # click, pydantic, shinobi
    assert (tmp_path / "finalised").read_text() == "yes"
    assert (tmp_path / "in-step").read_text() == "ran"


def test_a_program_that_hands_its_process_to_ninja_keeps_its_garbage_finalised(
    recipe_file: Callable[[str], Path], tmp_path: Path
) -> None:
    # main() without argv owns the process from then on, but what the program
    # made before it, and between two commands, is collected, not frozen.
    recipe_file(COLLECTOR_RECIPE)
    code = (
        "import sys\n"
        "from shinobi.cli.main import main\n"
        "class Cycle:\n"
        "    def __init__(self, name):\n"
        "        self.name, self.me = name, self\n"
        "    def __del__(self):\n"
        "        print('finalised', self.name)\n"
        "def command():\n"
        "    sys.argv = ['ninja', 'run', 'recipe.py:recipe', '--dryrun']\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, exc.code\n"
        "Cycle('before')\n"
        "command()\n"
        "Cycle('between')\n"
        "command()\n"
        "print('done')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stdout.splitlines() if line.startswith(("finalised", "done"))]
    assert said == ["finalised before", "finalised between", "done"]


def test_a_run_called_in_process_leaves_nothing_frozen(
    recipe_file: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The caller lives on: what it holds now may be garbage later.
    recipe_file(COLLECTOR_RECIPE)
    monkeypatch.chdir(tmp_path)
    frozen = gc.get_freeze_count()
    cli_main.main(["run", "recipe.py:recipe"])
    assert gc.get_freeze_count() == frozen
    assert (tmp_path / "in-step").read_text() == "True"


_BUILT = (
    "import gc, sys\n"
    "from shinobi.cli import collector\n"
    "collector.command_started(own_process=True)\n"
    "class Cycle:\n"
    "    def __del__(self):\n"
    "        print('finalised')\n"
    "frozen = gc.get_freeze_count()\n"
    "with collector.building(last={last}):\n"
    "    a = Cycle()\n"
    "    a.me = a\n"
    "    del a\n"
    "print('built', gc.get_freeze_count() > frozen)\n"
)


@pytest.mark.parametrize(
    ("last", "printed"),
    [
        # a run goes on to its steps: what building left as garbage is freed first
        (False, "finalised\nbuilt True\n"),
        # a dry run, compile or graph ends here: frozen as it is, not walked once more
        (True, "built True\n"),
    ],
)
def test_building_collects_before_freezing_only_when_the_command_goes_on(
    last: bool, printed: str
) -> None:
    code = _BUILT.format(last=last)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == printed
