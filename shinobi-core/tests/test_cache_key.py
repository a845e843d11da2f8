"""A relative output path that leaves the working directory
(``../out/x.txt``) is keyed by its absolute path, so a copied project does not
share the original's entry (which checks, and hands on, the original's file)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.cache import _project_relative
from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta


class In(BaseModel):
    src: File
    dst: Path


class Out(BaseModel):
    dst: File


cp = Cab(
    "cp",
    ["sh", "-c", 'cat "$0" > "$1"'],
    In,
    Out,
    {"src": ParamMeta(positional=True), "dst": ParamMeta(positional=True)},
)


def _status(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``cp --src in.txt --dst ../out/x.txt`` run in ``project``/work."""
    monkeypatch.chdir(project / "work")
    config = load_config({"cache.dir": str(cache)})
    inputs = {"src": "in.txt", "dst": "../out/x.txt"}
    (step,) = run_recipe(cp, inputs, config=config, cwd=project / "work").steps
    return step.status


def test_a_copied_project_writing_outside_its_working_directory_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--dst ../out/x.txt`` was keyed as written, so the copy shared the original's
    key, whose entry checked (and handed on) the original's ../out/x.txt."""
    cache, p1, p2 = tmp_path / "cache", tmp_path / "p1", tmp_path / "p2"
    (p1 / "work").mkdir(parents=True)
    (p1 / "out").mkdir()
    (p1 / "work" / "in.txt").write_text("hello\n")
    assert _status(p1, cache, monkeypatch) == "ok"
    shutil.copytree(p1, p2, symlinks=True)
    (p2 / "out" / "x.txt").write_text("garbage\n")
    assert _status(p2, cache, monkeypatch) == "ok"
    assert (p2 / "out" / "x.txt").read_text() == "hello\n"
    assert _status(p2, cache, monkeypatch) == "cached"  # its own entry now
    assert _status(p1, cache, monkeypatch) == "cached"  # and the original keeps its own


def test_the_key_keeps_a_path_inside_the_working_directory_relative() -> None:
    words = ["/p/w/a.txt", "/p/w/../out/x.txt", "/p/w/sub/../b.txt", "/p/w/..", "/q/c", "d"]
    assert _project_relative(words, "/p/w") == [
        "a.txt",
        "/p/w/../out/x.txt",
        "sub/../b.txt",
        "/p/w/..",
        "/q/c",
        "d",
    ]
