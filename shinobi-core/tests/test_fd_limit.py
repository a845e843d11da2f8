"""A wide scatter under a low open-file limit: ninja raises its soft limit, runs
fewer steps at once when the hard limit is too low, and says a step that still
ran out of descriptors is the machine's limit, not an internal error.

Every running step holds about seven descriptors in ninja; with a soft limit of
1024 (common on clusters) ``max_workers=300`` failed every slice past the
~200th with "internal error: OSError: [Errno 24] Too many open files".
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi import fd_limit
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe

_RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class SI(BaseModel):
    t: str

class SO(BaseModel):
    pass

# writes to both streams, so each slice holds its two log files too
sl = Cab("sl", ["sh", "-c"], SI, SO, {"t": ParamMeta(positional=True)})

class I(BaseModel):
    ts: list[str] = ["echo out; echo err >&2; sleep 1"] * 48

class O(BaseModel):
    pass

r = Recipe("r", I, O, max_workers=48)
r.add_step("s", sl, scatter=["t"], t=r.inputs.ts)
"""

#: Runs ninja with the open-file limits given on its command line.
_LIMITED = """
import resource, sys
soft, hard = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
sys.argv = ["ninja", *sys.argv[3:]]
from shinobi.cli.console import main
main()
"""


def _limited_run(tmp_path: Path, soft: int, hard: int) -> subprocess.CompletedProcess[str]:
    (tmp_path / "r.py").write_text(textwrap.dedent(_RECIPE))
    env = {**os.environ, "SHINOBI_CACHE_DIR": str(tmp_path / ".cache")}
    return subprocess.run(
        [sys.executable, "-c", _LIMITED, str(soft), str(hard), "run", "r.py:r", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _statuses(stdout: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for step in json.loads(stdout)["steps"]:
        for part in step.get("slices") or [step]:
            counts[part["status"]] = counts.get(part["status"], 0) + 1
    return counts


@pytest.mark.slow
def test_a_low_soft_limit_is_raised_toward_the_hard_one(tmp_path: Path) -> None:
    done = _limited_run(tmp_path, soft=256, hard=4096)  # 48 slices need ~400
    assert done.returncode == 0, done.stderr
    assert "Too many open files" not in done.stderr
    assert "at most" not in done.stderr  # nothing held back: the limit was raised
    assert _statuses(done.stdout).get("failed", 0) == 0


@pytest.mark.slow
def test_a_low_hard_limit_runs_fewer_steps_at_once_and_says_so(tmp_path: Path) -> None:
    done = _limited_run(tmp_path, soft=256, hard=256)
    assert done.returncode == 0, done.stderr
    assert "Too many open files" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if "steps run at once" in line]
    assert len(warnings) == 1, done.stderr
    assert "not 48" in warnings[0] and "ulimit -n" in warnings[0]
    assert _statuses(done.stdout).get("failed", 0) == 0


def test_steps_at_once_fits_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fd_limit, "_soft", None)
    monkeypatch.setattr(fd_limit, "_open_now", lambda: 16)
    monkeypatch.setattr(fd_limit, "_raised_to", lambda needed: 1024)
    room = (1024 - 16 - fd_limit.RESERVED) // fd_limit.FDS_PER_STEP
    assert fd_limit.steps_at_once(300) == room
    assert fd_limit.steps_at_once(1) == 1
    assert fd_limit.steps_at_once(10) == 10  # fits: no second look


class _In(BaseModel):
    x: str


class _Out(BaseModel):
    pass


def test_running_out_of_descriptors_is_the_machines_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_files(*_: Any, **__: Any) -> Any:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr("shinobi.dispatch.run_node", no_files)
    monkeypatch.chdir(tmp_path)
    cab = Cab("echo", ["echo"], _In, _Out, {"x": ParamMeta(positional=True)})
    recipe = Recipe("r", _In, _Out)
    recipe.add_step("e", cab, x=recipe.inputs.x)
    result = run_recipe(recipe, {"x": "hi"}, backend="native", max_workers=2)
    assert not result.ok
    error = str(result.error)
    assert "internal error" not in error
    assert "too many open files" in error and "ulimit -n" in error
