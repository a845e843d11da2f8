"""A rebuilt image file named relatively is a new image to the step cache, live.

The cache asks the backend for an image's digest by name alone. Apptainer
resolved a relative image file (``tool.sif``) against / there, never found it,
and keyed the step on the name: rebuilding ``tool.sif`` then served the old
image's cached result instead of running the new one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from live_engines import image, live_backend

NINJA = str(Path(sys.executable).parent / "ninja")

RECIPE = """
from shinobi.steps import Cab
probe = Cab(
    name="probe",
    command=["/bin/sh", "-c", "test -e /usr/bin/python3 && echo python > seen.txt || echo none > seen.txt"],
    image="tool.sif",
)
"""


def ninja_run(tmp_path: Path, engine: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["SHINOBI_CONFIG"] = os.devnull
    env["SHINOBI_CACHE_DIR"] = str(tmp_path / "cache")
    return subprocess.run(
        [NINJA, "run", "recipes.py:probe", "--backend", engine],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("engine", ["apptainer", "singularity"])
def test_a_rebuilt_relative_image_file_reruns_the_step(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    (tmp_path / "recipes.py").write_text(RECIPE)
    (tmp_path / "shinobi.toml").write_text("[cache]\nenabled = true\n")
    shutil.copy(image(engine, "busybox"), tmp_path / "tool.sif")
    first = ninja_run(tmp_path, engine)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "seen.txt").read_text() == "none\n"
    shutil.copy(image(engine, "python"), tmp_path / "tool.sif")  # the image is rebuilt
    second = ninja_run(tmp_path, engine)
    assert second.returncode == 0, second.stderr
    assert "cached" not in second.stderr
    assert (tmp_path / "seen.txt").read_text() == "python\n"
    third = ninja_run(tmp_path, engine)  # and the same image file is still a cache hit
    assert third.returncode == 0 and "cached" in third.stderr, third.stderr
