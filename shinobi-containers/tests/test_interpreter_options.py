"""An interpreter's options before its script.

``bash -e x.sh``, ``bash -eu x.sh``, ``/bin/sh -e x.sh``, ``python3 -W ignore
x.py`` and ``python3 -X dev x.py`` ran natively but failed in every container:
``-e`` was read as perl's "program inline" for every interpreter, so no script
was found, and ``-W``/``-X``'s value was taken for the script. The project
script was not mounted, and for ``/bin/sh -e`` the failure blamed ``/bin/sh``
(which the image has) instead of the script.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend
from test_command_script import CWD, SCRIPT, FileHost, project

from recipes import config_for
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe
from shinobi_containers.mounts import plan_mounts
from shinobi_containers.scripts import command_scripts, unseen_script_reason


@pytest.mark.parametrize(
    "argv",
    [
        ["bash", "-e", SCRIPT],
        ["bash", "-eu", SCRIPT],
        ["bash", "-euo", "pipefail", SCRIPT],
        ["bash", "-o", "pipefail", "-O", "extglob", SCRIPT],
        ["bash", "+o", "posix", SCRIPT],
        ["bash", "--rcfile", "/etc/rc", "--norc", SCRIPT],
        ["sh", "-e", SCRIPT],
        ["python3", "-W", "ignore", SCRIPT],
        ["python3", "-Wignore", SCRIPT],
        ["python3", "-X", "dev", SCRIPT],
        ["python3", "-E", "-u", SCRIPT],
        ["python3.12", "--check-hash-based-pycs", "never", SCRIPT],
        ["perl", "-Mstrict", "-Ilib", SCRIPT],
        ["node", "--require", "m", SCRIPT],
        ["bash", "--", SCRIPT],
    ],
)
def test_options_and_their_values_are_not_the_script(argv: list[str]) -> None:
    assert [path for _, path in command_scripts(argv, CWD)] == [SCRIPT]


def test_a_shell_named_by_path_is_found_with_its_script() -> None:
    found = [path for _, path in command_scripts(["/bin/sh", "-e", SCRIPT], CWD)]
    assert found == ["/bin/sh", SCRIPT]


@pytest.mark.parametrize(
    "argv",
    [
        ["bash", "-c", "echo hi", SCRIPT],
        ["bash", "-ec", "echo hi", SCRIPT],
        ["sh", "-s", SCRIPT],
        ["python3", "-uc", "print(1)", SCRIPT],
        ["python3", "-W", "ignore", "-m", "pkg", SCRIPT],
        ["python3", "-", SCRIPT],
        ["perl", "-e", "print 1", SCRIPT],
        ["node", "--eval", "1", SCRIPT],
    ],
)
def test_a_program_given_inline_has_no_script(argv: list[str]) -> None:
    assert command_scripts(argv, CWD) == []


def test_a_shell_that_cannot_open_its_script_blames_the_script() -> None:
    """The shell names itself first; the script it could not open is what is missing."""
    tool = "/usr/share/tool.sh"
    host = FileHost({"/bin/sh": b"\x7fELF", tool: b"#!/bin/sh\n"})
    said = unseen_script_reason(
        ["/bin/sh", "-e", tool],
        CWD,
        plan_mounts((), CWD, step="s", host=host),
        host,
        engine="docker",
        returncode=2,
        stderr=f"/bin/sh: 0: cannot open {tool}: No such file",
    )
    assert said is not None and said.startswith(f"exited with code 2: {tool} is a file")


# -- live, on every engine -------------------------------------------------------------


def run_command(engine: str, argv: list[str], cwd: Path, which: str) -> tuple[str, str | None]:
    recipe = Recipe(name="tool")
    recipe.add_step("only", Cab(name="tool", command=argv, image=image(engine, which)))
    result = run_recipe(recipe, backend=engine, config=config_for(engine), cwd=cwd, use_cache=False)
    return result.steps[0].status, result.steps[0].error


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "argv",
    [
        ["bash", "-eu", "../recipes/tools/hello.sh", "world"],
        ["/bin/sh", "-e", "../recipes/tools/hello.sh", "world"],
        ["python3", "-W", "ignore", "-X", "dev", "../recipes/tools/hello.py", "world"],
    ],
    ids=["bash-eu", "sh-e", "python-W-X"],
)
def test_a_script_after_interpreter_options_runs_in_the_container(
    engine: str, argv: list[str], tmp_path: Path
) -> None:
    live_backend(engine)
    script, run = project(tmp_path)
    hello = script.parent / "hello.py"
    hello.write_text('import sys\nopen("hello.txt", "w").write(f"hello {sys.argv[1]}\\n")\n')
    status, error = run_command(engine, argv, run, "python")
    assert status == "ok", error
    assert (run / "hello.txt").read_text() == "hello world\n"
