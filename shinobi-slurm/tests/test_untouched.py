"""``ninja run --backend slurm`` catches a tool that exits 0 without rewriting its output.

The check that an output is not the one an earlier run left was skipped for
steps that run elsewhere, for fear of a network filesystem's attribute cache:
a job whose tool failed quietly was reported done and its result cached, and
every later run replayed it. Files are now opened before they are looked at
again (which revalidates that cache), so the step is warned about and not
cached, as natively.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import Ninja

from shinobi.backends.base import PathUse
from shinobi.untouched_outputs import existing_outputs, untouched

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    name: str

class Out(BaseModel):
    out: File

noout = Cab("noout", ["/bin/sh", "-c", 'echo "pretending to write $0"'], In, Out,
            {"name": ParamMeta(positional=True), "out": ParamMeta(implicit="{name}.out")})
r = Recipe("r", In)
r.add_step("a", noout, name=r.inputs.name)
"""

OLD = 1_577_836_800  # 2020-01-01


@pytest.mark.usefixtures("slurm")
def test_an_output_the_job_left_as_it_was_is_warned_about_and_not_cached(
    ninja: Ninja, tmp_path: Path
) -> None:
    (tmp_path / "quiet.py").write_text(RECIPE)
    stale = tmp_path / "old.out"
    stale.write_text("OLD\n")
    os.utime(stale, (OLD, OLD))

    first = ninja("run", "quiet.py:r", "--name", "old", "--backend", "slurm")
    assert first.returncode == 0, first.stderr
    assert "did not rewrite its output" in first.stderr, first.stderr
    assert "this result is not cached" in first.stderr

    again = ninja("run", "quiet.py:r", "--name", "old", "--backend", "slurm")
    assert again.returncode == 0, again.stderr
    assert "cached" not in again.stdout + again.stderr.replace("not cached", ""), again.stdout
    assert "did not rewrite its output" in again.stderr


def test_elsewhere_notes_files_and_leaves_directories_unjudged(tmp_path: Path) -> None:
    made = tmp_path / "made.txt"
    made.write_text("x")
    os.utime(made, (OLD, OLD))
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    (ms / "table.dat").write_text("x")
    os.utime(ms / "table.dat", (OLD, OLD))
    os.utime(ms, (OLD, OLD))
    uses = [PathUse(str(made), "output", "out", "file"), PathUse(str(ms), "output", "ms", "dir")]

    here = existing_outputs(uses)
    elsewhere = existing_outputs(uses, elsewhere=True)

    assert set(here) == {str(made), str(ms)}
    assert set(elsewhere) == {str(made)}
    started = time.time() + 1  # after the change time utime() gave them
    assert untouched(elsewhere, started, elsewhere=True) == [str(made)]
    made.write_text("rewritten")
    assert untouched(elsewhere, started, elsewhere=True) == []
