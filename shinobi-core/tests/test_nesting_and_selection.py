"""A Recipe is a step of a larger one; backends are chosen from least to most specific."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.config import load_config
from shinobi.dispatch import choose_backend
from shinobi.graph import build_graph
from shinobi.runner import run_recipe
from shinobi.session import Session
from shinobi.steps import Cab, File, ParamMeta, Recipe


class FileIn(BaseModel):
    path: File


class FileOut(BaseModel):
    path: File | None = None


class Copy(BaseModel):
    src: File
    dst: File


class CopyOut(BaseModel):
    dst: File | None = None


touch = Cab("touch", "/bin/touch", FileIn, FileOut, {"path": ParamMeta(positional=True)})
copy = Cab(
    "copy",
    "/bin/cp",
    Copy,
    CopyOut,
    {"src": ParamMeta(positional=True), "dst": ParamMeta(positional=True)},
)


class OuterIn(BaseModel):
    first: File
    second: File


def test_a_recipe_nested_as_a_step_runs_its_own_graph(tmp_path: Path) -> None:
    inner = Recipe("inner", FileIn, FileOut)
    inner.add_step("touch", touch, path=inner.inputs.path)
    inner.set_output("path", inner.outputs.touch.path)

    outer = Recipe("outer", OuterIn, CopyOut)
    outer.add_step("make", inner, path=outer.inputs.first)
    outer.add_step("copy", copy, src=outer.outputs.make.path, dst=outer.inputs.second)
    outer.set_output("dst", outer.outputs.copy.dst)

    graph = build_graph(outer)
    assert graph.node("copy").deps == (graph.index["make"],)
    assert [path for path, _ in graph.walk()] == ["make", "make.touch", "copy"]

    result = run_recipe(
        outer, {"first": str(tmp_path / "a"), "second": str(tmp_path / "b")}, cwd=tmp_path
    )
    assert result.ok, result.error
    assert (tmp_path / "b").exists()
    assert result.outputs == {"dst": tmp_path / "b"}
    inner_steps = result.steps[0].details["steps"]
    assert [s.name for s in inner_steps] == ["make.touch"]


def test_backend_precedence(tmp_path: Path) -> None:
    recipe = Recipe("r")
    recipe.add_step("plain", touch, path="x")
    recipe.add_step("pinned", touch, path="y", backend="venv")
    graph = build_graph(recipe)
    plain, pinned = graph.node("plain"), graph.node("pinned")
    config = load_config({"backend.default": "docker"}, cwd=tmp_path, environ={})

    from_config = Session(config=config)
    assert choose_backend(from_config, plain) == "docker"
    from_flag = Session(config=config, backend_name="podman")
    assert choose_backend(from_flag, plain) == "podman"
    assert choose_backend(from_flag, pinned) == "venv"
    assert choose_backend(from_flag, pinned, override="slurm") == "slurm"


def test_a_recipe_ended_by_a_stop_not_yet_torn_down_is_interrupted(tmp_path: Path) -> None:
    """A nested recipe waiting at the budget returned between Ctrl-C and the teardown:
    it read as failed with no error, so its siblings were "stopped, as the run did
    after a step failed" though no step failed."""
    from shinobi.scheduler import run_graph

    inner = Recipe("inner")
    inner.add_step("a", Cab("t", "true"))
    top = Recipe("top", max_workers=2)
    top.add_step("sub", inner)
    session = Session(config=load_config({"cache.enabled": False}), cwd=str(tmp_path))
    session.control.request_stop()  # the signal handler's part; cancel() comes later
    result = run_graph(build_graph(top), {}, session)
    assert (result.status, result.error) == ("cancelled", "interrupted")
