"""``ninja doctor`` says what a run would: a default backend that cannot run a step
is a problem (exit 2), and a ``cache.dir`` that cannot be a directory, which a run
goes on without, a warning."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def test_a_default_venv_that_does_not_exist_is_a_problem(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    missing = tmp_path / "no" / "venv"
    env = {
        "SHINOBI_BACKEND_DEFAULT": "venv",
        "SHINOBI_BACKEND_VENV": str(missing),
        "SHINOBI_CACHE_DIR": str(tmp_path / "afile" / "sub"),
    }
    proc = ninja("doctor", env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    problems = [x for x in proc.stdout.splitlines() if x.startswith("  problem: ")]
    assert problems == [
        f"  problem: backend.default is 'venv', which cannot be used: the venv '{missing}'"
        f" does not exist; create it with `python3 -m venv {missing}`"
    ]
    (warning,) = [x for x in proc.stdout.splitlines() if x.startswith("  warning: ")]
    assert f"cannot be a directory: {tmp_path / 'afile'} is a file" in warning
    assert "--cache-dir" not in warning  # an option of `ninja cache`, not of doctor


def test_a_cache_dir_that_is_a_file_is_a_warning(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    # venv as the default with no backend.venv is fine: each step names its own
    env = {"SHINOBI_BACKEND_DEFAULT": "venv", "SHINOBI_CACHE_DIR": str(tmp_path / "afile")}
    proc = ninja("doctor", "--json", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    config = json.loads(proc.stdout)["config"]
    assert config["problems"] == []
    assert config["warnings"] == [
        f"the step cache at {tmp_path / 'afile'} is not a directory; set cache.dir (from"
        " environment variable SHINOBI_CACHE_DIR) to a directory (until then every run"
        " caches nothing)"
    ]
