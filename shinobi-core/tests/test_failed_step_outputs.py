"""A step that fails by itself warns of what it wrote, and moves nothing.

A tool that exits non-zero, or that the out-of-memory killer ends with
SIGKILL, leaves what it wrote under the final name, where it looks as
finished as a product; nothing said so (an interrupted step's part is set
aside, a failed step's is left for debugging).
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from pydantic import BaseModel
from test_interrupt import _ninja, ninja_env

from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class FileIn(BaseModel):
    out: Path


class FileOut(BaseModel):
    image: File


def _run(tmp_path: Path, cab: Cab, out: Path) -> object:
    recipe = Recipe("pipe")
    recipe.add_step("write", cab, out=out)
    return run_recipe(recipe, {}, backend="native", cwd=tmp_path, workdir=tmp_path)


def _image_writer(script: str) -> Cab:
    return Cab(
        "write",
        ["/bin/sh", "-c", script],
        FileIn,
        FileOut,
        {"out": ParamMeta(positional=True), "image": ParamMeta(implicit="{out}")},
    )


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ('echo half > "$0"; exit 3', "exited with code 3"),
        ('echo half > "$0"; kill -9 $$', "SIGKILL"),
    ],
    ids=["exit-code", "sigkill"],
)
def test_a_failed_step_warns_of_the_output_it_wrote_and_leaves_it(
    tmp_path: Path, script: str, said: str
) -> None:
    out = tmp_path / "img.fits"
    (step,) = _run(tmp_path, _image_writer(script), out).steps  # type: ignore[attr-defined]
    assert step.status == "failed" and said in step.error
    assert out.read_text() == "half\n"  # left for debugging
    assert not (tmp_path / "img.fits.interrupted").exists()
    (warning,) = step.warnings
    assert str(out) in warning and "it may be incomplete" in warning


def test_a_failed_step_that_wrote_nothing_says_nothing_of_its_output(tmp_path: Path) -> None:
    out = tmp_path / "img.fits"
    out.write_text("yesterday's whole product\n")
    old = time.time() - 3600
    os.utime(out, (old, old))
    time.sleep(0.1)
    (step,) = _run(tmp_path, _image_writer("exit 3"), out).steps  # type: ignore[attr-defined]
    assert step.status == "failed" and step.warnings == []


RECIPE = """
from pydantic import BaseModel
from shinobi.steps import MS, Cab, ParamMeta, Recipe

class MsIn(BaseModel):
    out: MS

class MsOut(BaseModel):
    out: MS

KILLED = 'mkdir -p "$0"; echo 1 >> "$0/data"; kill -9 $$'
writer = Cab("writer", ["/bin/sh", "-c", KILLED], MsIn, MsOut, {"out": ParamMeta(positional=True)})
pipe = Recipe("pipe")
pipe.add_step("write", writer, out="t.ms")
"""


def test_a_measurement_set_a_killed_step_was_writing_is_warned_of_in_the_records(
    tmp_path: Path,
) -> None:
    """The user's case: killed by SIGKILL (the OOM killer, as far as it can tell), t.ms
    looked complete, and neither --json nor the manifest said a word of it."""
    ms = tmp_path / "t.ms"
    ms.mkdir()
    (ms / "data").write_text("0\n")
    (tmp_path / "recipe.py").write_text(textwrap.dedent(RECIPE))
    done = subprocess.run(
        [*_ninja(), "run", "recipe.py:pipe", "--json", "--provenance"],
        cwd=tmp_path,
        env=ninja_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert f"warning: step write: it failed after writing '{ms}'" in done.stderr
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    for record in (json.loads(done.stdout), json.loads(manifest.read_text())):
        (step,) = record["steps"]
        assert step["status"] == "failed" and "SIGKILL" in step["error"]
        assert any(str(ms) in w and "may be incomplete" in w for w in step["warnings"])
    assert (ms / "data").read_text() == "0\n1\n"
