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
from shinobi.steps import MS, Cab, File, ParamMeta, Recipe


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


# -- an input the step rewrites in place (mutable) ----------------------------------
class VisIn(BaseModel):
    vis: MS


class VisBack(BaseModel):  # a passthrough: the same MS, handed on
    vis: MS | None = None


class NothingOut(BaseModel):
    pass


def _rewriter(script: str, outputs: type[BaseModel]) -> Cab:
    meta = {"vis": ParamMeta(positional=True, mutable=True)}
    return Cab("flag", ["/bin/sh", "-c", script], VisIn, outputs, meta)


def _rewrite(tmp_path: Path, script: str, outputs: type[BaseModel]) -> tuple[Path, object]:
    """Run ``script`` on ``c.ms``, an hour-old MS it rewrites in place."""
    ms = tmp_path / "c.ms"
    ms.mkdir()
    (ms / "table.dat").write_text("raw\n")
    old = time.time() - 3600
    for path in (ms / "table.dat", ms):
        os.utime(path, (old, old))
    time.sleep(0.1)
    recipe = Recipe("pipe")
    recipe.add_step("flag", _rewriter(script, outputs), vis=ms)
    return ms, run_recipe(recipe, {}, backend="native", cwd=tmp_path, workdir=tmp_path)


@pytest.mark.parametrize("outputs", [VisBack, NothingOut], ids=["passthrough", "no-output"])
def test_a_failed_step_that_changed_its_mutable_input_warns_of_it(
    tmp_path: Path, outputs: type[BaseModel]
) -> None:
    """The auditor's case: a flagger wrote into c.ms and exited 3, and nothing said
    that the MS, left under its name, may be half-flagged."""
    script = 'echo x >> "$0/HISTORY"; touch "$0/NEWCOL"; exit 3'
    ms, result = _rewrite(tmp_path, script, outputs)
    (step,) = result.steps  # type: ignore[attr-defined]
    assert step.status == "failed" and "exited with code 3" in step.error
    assert (ms / "HISTORY").read_text() == "x\n"  # where it was
    (warning,) = step.warnings
    assert f"it failed after changing '{ms}', an input it rewrites in place" in warning
    assert "half-rewritten" in warning and "copy of the raw data" in warning


@pytest.mark.parametrize("script", ["exit 3", 'echo x >> "$0/HISTORY"'], ids=["failed", "ok"])
def test_a_mutable_input_draws_no_warning_unless_a_failed_step_changed_it(
    tmp_path: Path, script: str
) -> None:
    _, result = _rewrite(tmp_path, script, VisBack)
    (step,) = result.steps  # type: ignore[attr-defined]
    assert step.warnings == [], step.warnings
