"""``ninja run`` started with its standard streams closed (cron, a daemon) still runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta

class I(BaseModel):
    out: str = "made.txt"

class O(BaseModel):
    pass

make = Cab("make", ["touch"], I, O, {"out": ParamMeta(positional=True)})
"""


def test_a_run_with_stdout_and_stderr_closed_does_its_work(tmp_path: Path) -> None:
    (tmp_path / "r.py").write_text(RECIPE)
    ninja = shutil.which("ninja", path=str(Path(sys.executable).parent))
    assert ninja is not None
    proc = subprocess.run(
        ["sh", "-c", f"'{ninja}' run r.py:make --no-cache >&- 2>&-"], cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0
    assert (tmp_path / "made.txt").exists()
