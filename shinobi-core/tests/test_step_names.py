"""A step's name as a file name: never hidden or relative, never too long for a file,
the same every time so ``ninja logs RUN STEP`` finds what the run wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shinobi.local_runs import LocalRun, run_logs
from shinobi.session import safe_name

LONG = "x" * 300


@pytest.mark.parametrize(("name", "made"), [("", "_"), (".", "_."), ("..", "_.."), ("a b", "a_b")])
def test_a_safe_name_is_never_hidden_nor_the_folder_itself(name: str, made: str) -> None:
    assert safe_name(name).split("-")[0] == made
    assert safe_name(name) == safe_name(name)  # the same every time: its log is found again


def test_names_that_differ_keep_logs_that_differ() -> None:
    """``cal ms`` and ``cal:ms`` are both written ``cal_ms``: each changed name
    gets a hash of itself, so neither writes over the other's log, nor over
    ``cal_ms``'s own."""
    made = [safe_name(n) for n in ("cal ms", "cal:ms", "cal_ms", "cal/ms", "cal\nms")]
    assert len(set(made)) == len(made) and made[2] == "cal_ms"
    assert all(m.startswith("cal_ms") for m in made)
    assert safe_name("cal ms[3]") == f"{safe_name('cal ms')}[3]"  # slices follow their step


def test_a_name_too_long_for_a_file_is_cut_with_a_hash_of_the_whole_name() -> None:
    made = safe_name(LONG)
    assert len((made + ".out").encode()) <= 255 and made.startswith("x" * 150)
    assert made == safe_name(LONG)  # the same every time: the log is found again
    assert safe_name(LONG + "y") != made  # two long names that start alike still differ
    assert safe_name("é" * 300).startswith("_-")  # a run of unsafe characters is one "_"
    kept = "y" * 200
    assert safe_name(kept) == kept


def test_a_long_scattered_steps_slices_keep_their_numbers_after_the_cut() -> None:
    step = safe_name(LONG)
    for index in ("[0]", "[12]", "[1][3]"):
        made = safe_name(f"{LONG}{index}")
        assert made == f"{step}{index}" and len(f"{made}.out".encode()) <= 255
    near = "z" * 199  # short enough whole, too long with its slice numbers
    assert safe_name(f"{near}[7]") == f"{near}[7]" and safe_name(near) == near


def test_the_logs_of_a_long_named_step_and_its_slices_are_found(tmp_path: Path) -> None:
    logs = tmp_path / "run" / "logs"
    logs.mkdir(parents=True)
    for name in (LONG, f"{LONG}y[0]", f"{LONG}y[1]", "other"):
        (logs / f"{safe_name(name)}.out").write_text(name[-4:])
    run = LocalRun("run", tmp_path / "run", False, 0.0)
    assert [p.read_text() for _, p in run_logs(run, LONG)] == ["x" * 4]
    assert [p.read_text() for _, p in run_logs(run, f"{LONG}y")] == ["y[0]", "y[1]"]


RECIPE = f"""
from shinobi.steps import Cab, Recipe
long = Recipe("long")
long.add_step({LONG!r}, Cab("say", ["/bin/sh", "-c", "echo hello"]))
"""


@pytest.mark.slow
def test_a_step_with_a_300_character_name_keeps_its_log(tmp_path: Path) -> None:
    ninja = str(Path(sys.executable).parent / "ninja")
    (tmp_path / "recipe.py").write_text(RECIPE)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ninja, *args], cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60
        )

    done = run("run", "recipe.py:long", "--no-cache")
    assert done.returncode == 0 and "cannot write the log" not in done.stdout + done.stderr
    (listed,) = json.loads(run("runs", "--json").stdout)["runs"]
    said = run("logs", listed["run_id"], LONG)
    assert said.returncode == 0, said.stderr
    assert said.stdout == "hello\n"


def test_the_logs_of_a_nested_recipe_or_a_loop_are_its_steps(tmp_path: Path) -> None:
    """`ninja logs RUN inner` said the nested recipe 'inner' kept no logs."""
    logs = tmp_path / "run" / "logs"
    logs.mkdir(parents=True)
    for name in ("inner.count[0]", "inner.count[1]", "innerx", "sc.1.cal"):
        (logs / f"{safe_name(name)}.err").write_text(name)
    run = LocalRun("run", tmp_path / "run", False, 0.0)
    found = sorted(p.read_text() for _, p in run_logs(run, "inner"))
    assert found == ["inner.count[0]", "inner.count[1]"]  # not 'innerx'
    assert [p.read_text() for _, p in run_logs(run, "sc")] == ["sc.1.cal"]


def test_a_ctrl_c_as_ninja_exits_leaves_no_traceback(monkeypatch: Any) -> None:
    """A second Ctrl-C landing in the exit collection printed 'Exception ignored in
    atexit callback' and a traceback."""
    import gc

    from shinobi.cli import collector

    def interrupted() -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(gc, "collect", interrupted)
    collector.at_exit()  # returns quietly
