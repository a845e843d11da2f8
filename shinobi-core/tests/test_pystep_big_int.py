"""A pystep returning an int of more than 4300 digits (``10**5000``) succeeded, and
then ninja raised Python's int-to-text limit: natively ``ninja run`` exited 70
("internal error: ValueError: Exceeds the limit") after recording the run as
ok; in a venv the runner crashed writing its outputs, failing the step."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_venv_fixtures import made_venv

__all__ = ["made_venv"]

RECIPE = """
import shinobi

@shinobi.pystep
def native(n: int = 5000) -> int:
    return 10**n

@shinobi.pystep(venv={venv!r})
def in_venv(n: int = 5000) -> int:
    return 10**n
"""


@pytest.mark.parametrize("target", ["native", "in_venv"])
def test_a_pystep_may_return_an_int_of_any_size(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    made_venv: Path,
    target: str,
) -> None:
    recipe_file(RECIPE.format(venv=str(made_venv)))
    for _ in range(2):  # the second run reads it back from the cache
        done = ninja("run", f"recipe.py:{target}", "--json")
        assert done.returncode == 0, done.stderr[-2000:]
        outputs = json.loads(done.stdout, parse_int=str)["outputs"]  # (this test's limit)
        assert outputs["result"] == f"1{'0' * 5000}"
    shown = ninja("run", f"recipe.py:{target}")
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert f"result = 1{'0' * 5000}\n" in shown.stdout


def test_a_program_calling_ninja_gets_its_int_limit_back() -> None:
    from shinobi.cli.main import main

    before = sys.get_int_max_str_digits()
    main(["--version"])
    assert sys.get_int_max_str_digits() == before
