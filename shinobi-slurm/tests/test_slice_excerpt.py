"""``ninja run --backend slurm``: a failed scatter slice's excerpt under the error is
that slice's own stderr tail, as ``ninja logs RUN 'solve[2]'`` shows it, not every
slice's stderr joined, where the others' notes read as the failing slice's."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Ninja

pytestmark = pytest.mark.usefixtures("slurm")

SCATTERED = """
from pydantic import BaseModel, Field
from shinobi.steps import Cab, ParamMeta, Recipe

SCRIPT = 'echo "note from spw $1" >&2; [ "$1" != 2 ] || { echo "spw $1: solve failed" >&2; exit 3; }'

class In(BaseModel):
    spw: int

class Out(BaseModel):
    pass

solve = Cab("solve", ["/bin/sh", "-c", SCRIPT, "solve"], In, Out, {"spw": ParamMeta(positional=True)})

class PIn(BaseModel):
    spws: list[int] = Field([0, 1, 2, 3])

r = Recipe("r", PIn, Out, max_workers=4)
r.add_step("solve", solve, scatter=["spw"], spw=r.inputs.spws)
"""


def test_the_excerpt_is_the_failing_slices_own_stderr(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "sl.py").write_text(SCATTERED)
    done = ninja("run", "--backend", "slurm", "sl.py:r")
    assert done.returncode == 1, done.stderr
    excerpt = [line for line in done.stderr.splitlines() if line.startswith("  | ")]
    assert excerpt == ["  | note from spw 2", "  | spw 2: solve failed"], done.stderr
