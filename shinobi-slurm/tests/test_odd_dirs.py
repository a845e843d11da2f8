"""``ninja run --backend slurm`` from a directory whose name Slurm would read specially.

A step's logs go under its run directory, given to sbatch as ``--output``/
``--error``, and the job runs in the recipe's directory (``--chdir``), all
written as ``#SBATCH`` lines. Slurm expands ``%x``/``%j`` in log paths, the
directive parser eats backslashes and stops at an unmatched ``'``: a step run
from ``100%x``, ``a\\b`` or ``it's`` failed as "killed by signal 53" (its log
could not be opened), was refused by sbatch, or ran in /tmp instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Ninja

from shinobi_slurm.sbatch import Option, directive, log_path

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class O(BaseModel):
    out: str

writer = Cab("writer", ["/bin/sh", "-c", 'pwd > "$1"; echo wrote-it', "writer"], O, None,
             {"out": ParamMeta(positional=True)})
r = Recipe("r", O)
r.add_step("write", writer, out=r.inputs.out)
"""

ODD = ["100%x", "back\\slash", "it's", 'all "of" \\ them %j', "trail\\", "run#2", "tab\there"]


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/d/100%x/o", "/d/100%%x/o"),
        ("/d/a\\b%j/o", "/d/a\\\\b%j/o"),  # a backslash turns the patterns off
        ("/d/plain/o", "/d/plain/o"),
    ],
)
def test_log_paths_are_escaped_for_slurm_s_patterns(path: str, said: str) -> None:
    assert log_path(path) == said


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("/d/a\\b", "#SBATCH --chdir=/d/a\\\\b"),
        ("/d/it's", '#SBATCH --chdir="/d/it\'s"'),
        ('/d/a "b"', '#SBATCH --chdir="/d/a \\"b\\""'),
        ("/d/run#2", '#SBATCH --chdir="/d/run#2"'),  # unquoted, the rest was a comment
        ("/d/a\tb", '#SBATCH --chdir="/d/a\tb"'),  # unquoted, "Invalid directive"
    ],
)
def test_directives_escape_what_sbatch_s_parser_reads(value: str, line: str) -> None:
    assert directive(Option("chdir", value)) == line


@pytest.mark.usefixtures("slurm")
@pytest.mark.parametrize("odd", ODD)
def test_a_step_runs_from_a_directory_with_an_odd_name(
    ninja: Ninja, tmp_path: Path, odd: str
) -> None:
    here = tmp_path / odd
    here.mkdir()
    (here / "odd.py").write_text(RECIPE)
    done = ninja("run", "odd.py:r", "--out", "where.txt", "--backend", "slurm", cwd=here)
    assert done.returncode == 0, done.stderr
    assert (here / "where.txt").read_text().strip() == str(here)
    logs = list(here.glob(".shinobi/runs/*/logs/write.out"))
    assert len(logs) == 1 and logs[0].read_text().strip() == "wrote-it"
