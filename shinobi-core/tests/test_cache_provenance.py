"""What a run manifest says about the tool each step ran.

The step cache knows an installed program by its name only (``wsclean`` on
PATH), so the manifest is the one record of which installation ran, and of
which ``version=`` the cab declared.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


def _manifest(tmp_path: Path) -> dict[str, Any]:
    (path,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _install(directory: Path, name: str) -> Path:
    """A program ``name`` in ``directory``, reached through a link as installs often are."""
    directory.mkdir(parents=True)
    real = directory / f"{name}-3.4"
    real.write_text("#!/bin/sh\necho imaged\n")
    real.chmod(0o755)
    (directory / name).symlink_to(real.name)
    return real


def test_a_native_step_records_the_program_it_ran_and_the_cab_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _install(tmp_path / "opt" / "bin", "fakeclean")
    monkeypatch.setenv("PATH", f"{real.parent}{os.pathsep}{os.environ['PATH']}")
    recipe = Recipe("selfcal")
    recipe.add_step("image", Cab("fakeclean", ["fakeclean"], version="3.4"))
    recipe.add_step("ls", Cab("ls", ["./local-tool"]))  # a program named by a path
    tool = tmp_path / "local-tool"
    tool.write_text("#!/bin/sh\ntrue\n")
    tool.chmod(0o755)
    config = load_config({"cache.enabled": False})
    result = run_recipe(recipe, {}, config=config, cwd=tmp_path, provenance=True)
    assert result.ok
    manifest = _manifest(tmp_path)
    steps = {s["name"]: s for s in manifest["steps"]}
    assert steps["image"]["program"] == str(real)
    assert steps["ls"]["program"] == str(tool)
    nodes = {n["name"]: n for n in manifest["graph"]["nodes"]}
    assert nodes["image"]["tool_version"] == "3.4"
    assert nodes["image"]["command"] == ["fakeclean"]
    assert nodes["ls"]["tool_version"] is None


def test_a_program_that_is_not_here_is_recorded_as_unknown(tmp_path: Path) -> None:
    recipe = Recipe("broken")
    recipe.add_step("image", Cab("nope", ["no-such-program-anywhere-zz"]))
    config = load_config({"cache.enabled": False})
    run_recipe(recipe, {}, config=config, cwd=tmp_path, provenance=True)
    (step,) = _manifest(tmp_path)["steps"]
    assert step["status"] == "failed"
    assert step["program"] is None


class _CopyIn(BaseModel):
    src: Path
    out: Path


class _CopyOut(BaseModel):
    out: Path | None = None


def _copy_recipe() -> Recipe:
    class In(BaseModel):
        src: Path

    copy = Cab(
        "copy",
        ["/bin/sh", "-c", 'cat "$0" > "$1"'],
        _CopyIn,
        _CopyOut,
        {"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
    )
    recipe = Recipe("pipe", In)
    recipe.add_step("copy", copy, src=recipe.inputs.src, out=Path("out.txt"))
    return recipe


def test_each_step_records_the_content_of_the_inputs_it_read(tmp_path: Path) -> None:
    # "Which visibilities made this image?" A path says where, not what: a step
    # records the content digest of every input, as its cache key took it, on
    # the run that ran it and on one that reused its result.
    (tmp_path / "in.txt").write_text("visibilities\n")
    expected = "file:" + hashlib.sha256(b"visibilities\n").hexdigest()
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    for status in ("ok", "cached"):
        runs = tmp_path / ".shinobi" / "runs"
        before = set(runs.iterdir()) if runs.is_dir() else set()
        result = run_recipe(
            _copy_recipe(), {"src": "in.txt"}, config=config, cwd=tmp_path, provenance=True
        )
        (step,) = result.steps
        assert step.status == status
        (run_dir,) = set(runs.iterdir()) - before
        (record,) = json.loads((run_dir / "manifest.json").read_text())["steps"]
        assert record["input_digests"] == [
            {"field": "src", "path": str(tmp_path / "in.txt"), "digest": expected}
        ]


def test_without_the_cache_no_input_digest_is_claimed(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("visibilities\n")
    config = load_config({"cache.enabled": False})
    run_recipe(_copy_recipe(), {"src": "in.txt"}, config=config, cwd=tmp_path, provenance=True)
    (step,) = _manifest(tmp_path)["steps"]
    assert step["status"] == "ok" and step["input_digests"] is None
