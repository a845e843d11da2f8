"""An output a step names outside what its container showed of the host.

A wrangled path, or a path a pystep returns, that no mount covers was written
in the container's own filesystem: the step passed with whatever file the host
had at that path (a stale one), or was said not to have created it. A backend
now reports the host paths the step could see (``BackendRun.visible``) and
core fails such an output saying where it went and how to have it mounted.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.backends.base import BackendRun, Invocation, RunControl
from shinobi.backends.native import NativeBackend
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Wrangler
from shinobi.steps.outputs import unmounted_text_paths, unseen_output


class Product(BaseModel):
    product: File


class Products(BaseModel):
    products: list[File]


def test_a_step_that_saw_the_whole_host_is_not_checked(tmp_path: Path) -> None:
    assert unseen_output(Product, {"product": "/nowhere/x"}, str(tmp_path), None, "native") is None


def test_an_output_under_a_mount_is_seen(tmp_path: Path) -> None:
    seen = unseen_output(Product, {"product": "out/x.txt"}, str(tmp_path), (str(tmp_path),), "d")
    assert seen is None


def test_an_output_outside_every_mount_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    work = str(tmp_path / "work")
    outputs = {"product": str(tmp_path / "other/x.txt")}
    said = unseen_output(Product, outputs, work, (work,), "docker")
    assert said is not None and "\n" not in said
    assert said.startswith(f"output 'product' names '{tmp_path}/other/x.txt', outside every")
    assert "docker container" in said and "path-typed input" in said


def test_a_sibling_with_a_longer_name_is_not_under_the_mount(tmp_path: Path) -> None:
    outputs = {"products": [str(tmp_path / "a/x"), str(tmp_path / "ab/y")]}
    said = unseen_output(Products, outputs, str(tmp_path), (str(tmp_path / "a"),), "podman")
    assert said is not None and f"'{tmp_path}/ab/y'" in said


def test_a_link_out_of_the_mount_leads_where_the_container_has_nothing(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "scratch").mkdir()
    os.symlink(tmp_path / "scratch", tmp_path / "work" / "link")
    visible = (str(tmp_path / "work"),)
    said = unseen_output(Product, {"product": "link/x"}, str(tmp_path / "work"), visible, "d")
    assert said is not None
    both = (*visible, str(tmp_path / "scratch"))
    assert unseen_output(Product, {"product": "link/x"}, str(tmp_path / "work"), both, "d") is None


def test_a_device_the_container_has_of_its_own_is_seen(tmp_path: Path) -> None:
    visible = (str(tmp_path), "/dev/null")
    assert unseen_output(Product, {"product": "/dev/null"}, str(tmp_path), visible, "d") is None


class In(BaseModel):
    outdir: str


#: A tool that says where it wrote (a wrangled output), as the audit's recipe did.
WROTE = Cab(
    name="t",
    command=["sh", "-c", 'mkdir -p "$1" && echo FRESH > "$1/p.txt" && echo "wrote $1/p.txt"', "sh"],
    inputs_model=In,
    outputs_model=Product,
    field_meta={"outdir": ParamMeta(positional=True)},
    wranglers=[Wrangler(r"^wrote (.+)$", "output", output="product")],
)


@pytest.fixture
def mounted_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Native runs report that they saw only their working directory, as a container would."""
    real = NativeBackend.run

    def run(self: NativeBackend, invocation: Invocation, control: RunControl) -> BackendRun:
        done = real(self, invocation, control)
        done.visible = (invocation.cwd,)
        return done

    monkeypatch.setattr(NativeBackend, "run", run)


@pytest.mark.usefixtures("mounted_cwd")
def test_a_wrangled_output_outside_the_mounts_fails_the_step(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "p.txt").write_text("STALE\n")  # passed as the product before
    outdir = str(tmp_path / "old")
    result = run_recipe(WROTE, {"outdir": outdir}, cwd=tmp_path / "work", use_cache=False)
    assert result.status == "failed"
    error = result.steps[0].error or ""
    assert error.startswith("output 'product' names") and "outside every directory" in error
    assert "did not create" not in error


@pytest.mark.usefixtures("mounted_cwd")
def test_a_wrangled_output_under_the_mounts_passes(tmp_path: Path) -> None:
    result = run_recipe(WROTE, {"outdir": "sub"}, cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    assert (tmp_path / "sub" / "p.txt").read_text() == "FRESH\n"


# -- a str input naming a host path the container never saw ---------------------------


class Vis(BaseModel):
    vis: str
    names: list[str] = []


def test_a_text_input_naming_a_host_path_outside_the_mounts_is_named(tmp_path: Path) -> None:
    (tmp_path / "raw" / "obs1.ms").mkdir(parents=True)
    (tmp_path / "work").mkdir()
    work = str(tmp_path / "work")
    hints = unmounted_text_paths(Vis, {"vis": "../raw/obs1.ms"}, work, (work,), "docker")
    assert len(hints) == 1 and "\n" not in hints[0]
    hint = hints[0]
    assert hint.startswith("input 'vis' is the text '../raw/obs1.ms', which names")
    assert "docker container" in hint and "File, Directory, MS or Path" in hint


def test_only_existing_paths_outside_the_mounts_are_named(tmp_path: Path) -> None:
    (tmp_path / "raw").mkdir()
    (tmp_path / "in.txt").write_text("x\n")
    cwd, visible = str(tmp_path), (str(tmp_path),)
    for text in ("in.txt", "/nowhere/obs1.ms", "hello world", "", "/"):
        assert unmounted_text_paths(Vis, {"vis": text}, cwd, visible, "d") == [], text
    # the whole host seen (native), or a field declared a path (mounted) as text
    assert unmounted_text_paths(Vis, {"vis": str(tmp_path)}, cwd, None, "native") == []
    declared = frozenset({"vis"})
    assert unmounted_text_paths(Vis, {"vis": "/tmp"}, cwd, visible, "d", declared) == []


def test_a_list_of_text_is_named_once_by_its_first_unmounted_path(tmp_path: Path) -> None:
    cwd, visible = str(tmp_path), (str(tmp_path),)
    values = {"vis": "x", "names": ["a", "/tmp", "/usr"]}
    hints = unmounted_text_paths(Vis, values, cwd, visible, "podman")
    assert len(hints) == 1 and hints[0].startswith("input 'names' is the text '/tmp'")


class TextIn(BaseModel):
    vis: str


#: The audit's tool: it fails in its own words when it cannot see the MS it was given.
CHECK = Cab(
    name="check",
    command=["sh", "-c", 'test -d "$1" || { echo "$1: not a measurement set" >&2; exit 3; }', "t"],
    inputs_model=TextIn,
    field_meta={"vis": ParamMeta(positional=True)},
)


@pytest.mark.usefixtures("mounted_cwd")
def test_a_failed_step_warns_of_its_text_input_naming_an_unmounted_path(tmp_path: Path) -> None:
    (tmp_path / "raw" / "obs1.ms").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    failed = run_recipe(CHECK, {"vis": "../raw/nothing.ms"}, cwd=work, use_cache=False)
    assert failed.status == "failed" and failed.steps[0].warnings == []  # no such path
    passed = run_recipe(CHECK, {"vis": "../raw/obs1.ms"}, cwd=work, use_cache=False)
    assert passed.ok and passed.steps[0].warnings == []  # natively it was there: no hint
    (tmp_path / "raw" / "obs1.ms").rmdir()
    (tmp_path / "raw" / "obs1.ms").write_text("not a directory\n")
    result = run_recipe(CHECK, {"vis": "../raw/obs1.ms"}, cwd=work, use_cache=False)
    assert result.status == "failed"
    assert [w[:40] for w in result.steps[0].warnings] == [
        "input 'vis' is the text '../raw/obs1.ms'"
    ]
