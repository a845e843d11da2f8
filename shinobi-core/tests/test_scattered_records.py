"""The records of a scattered nested recipe's steps.

The manifest listed a scattered nested recipe's steps by their template names
(``sub.first``, ``s.L.1``), which no step ever has, as ``not run`` beside the
real ``sub[0].first``; and the steps of a slice a failure cut short, or of
slices a failure kept from starting, were missing from it. ``run --json``
left out the unstarted steps of a failed slice, and gave a never-started
scattered recipe its template steps.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process as _ninja
from pydantic import BaseModel

from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe

RECIPES = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class SIn(BaseModel):
    x: str

class Out(BaseModel):
    pass

sh = Cab("sh", ["/bin/sh", "-c", '[ "$0" = bad ] && exit 4; echo "$0"'], SIn, Out,
         {"x": ParamMeta(positional=True)})

sub = Recipe("sub", SIn, Out)
sub.add_step("first", sh, x=sub.inputs.x)
sub.add_step("second", sh, x="after-x")

class In(BaseModel):
    xs: list[str] = ["a", "b"]

r = Recipe("r", In, Out)
r.add_step("sub", sub, scatter=["x"], x=r.inputs.xs)

class MIn(BaseModel):
    xs: list[str]

mid = Recipe("mid", MIn, Out)
mid.add_step("pre", sh, x="pre")
mid.add_step("sub", sub, scatter=["x"], x=mid.inputs.xs)

class Deep(BaseModel):
    xss: list[list[str]] = [["a"], ["bad", "c"], ["d"]]

deep = Recipe("deep", Deep, Out)
deep.add_step("m", mid, scatter=["xs"], xs=deep.inputs.xss)

class NoIn(BaseModel):
    pass

class Made(BaseModel):
    out: File

stop = Cab("stop", ["/bin/sh", "-c", "exit 4"], NoIn, Made, {"out": ParamMeta(implicit="o.txt")})

class After(BaseModel):
    x: str
    made: File

late = Recipe("late", After, Out)
late.add_step("first", sh, x=late.inputs.x)

early = Recipe("early", In, Out)
early.add_step("stop", stop)
early.add_step("sub", late, scatter=["x"], x=early.inputs.xs, made=early.outputs.stop.out)
"""


def _load(tmp_path: Path, name: str) -> Recipe:
    path = tmp_path / "recipes.py"
    path.write_text(RECIPES)
    from shinobi.loaders import load_target

    recipe = load_target(f"{path}:{name}")
    assert isinstance(recipe, Recipe)
    return recipe


def _manifest(tmp_path: Path, recipe: Recipe, inputs: dict[str, Any]) -> dict[str, Any]:
    config = load_config({"cache.enabled": False, "provenance.enabled": True})
    run_recipe(recipe, inputs, cwd=tmp_path, workdir=tmp_path, config=config)
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    found: dict[str, Any] = json.loads(manifest.read_text())
    return found


def _manifest_steps(tmp_path: Path, recipe: Recipe, inputs: dict[str, Any]) -> dict[str, str]:
    return {s["name"]: s["status"] for s in _manifest(tmp_path, recipe, inputs)["steps"]}


def test_a_scattered_nested_recipe_lists_only_its_slices_steps(tmp_path: Path) -> None:
    steps = _manifest_steps(tmp_path, _load(tmp_path, "r"), {"xs": ["a", "b"]})
    assert steps == {
        "sub": "ok",
        "sub[0]": "ok",
        "sub[1]": "ok",
        "sub[0].first": "ok",
        "sub[0].second": "ok",
        "sub[1].first": "ok",
        "sub[1].second": "ok",
    }


def test_the_steps_a_failed_slice_left_unstarted_are_not_run(tmp_path: Path) -> None:
    steps = _manifest_steps(tmp_path, _load(tmp_path, "r"), {"xs": ["a", "bad", "c"]})
    assert steps == {
        "sub": "failed",
        "sub[0]": "ok",
        "sub[1]": "failed",
        "sub[2]": "not run",
        "sub[0].first": "ok",
        "sub[0].second": "ok",
        "sub[1].first": "failed",
        "sub[1].second": "not run",
        "sub[2].first": "not run",
        "sub[2].second": "not run",
    }


def test_the_report_counts_no_template_step_as_not_run(tmp_path: Path) -> None:
    """``ninja report`` added every graph node the manifest had no record of as
    not run: ``sub.first`` again, beside the slices' real steps."""
    from shinobi.render.report_html import render_report

    manifest = _manifest(tmp_path, _load(tmp_path, "r"), {"xs": ["a", "bad", "c"]})
    page = render_report(manifest)
    shown = re.findall(r"<summary><b>([^<]*)</b> <span[^>]*>([^<]*)", page)
    assert ("sub[2].second", "not run") in shown, shown
    assert not [name for name, _ in shown if name.startswith("sub.")], shown


def test_a_scatter_inside_a_slice_lists_its_own_slices_steps(tmp_path: Path) -> None:
    steps = _manifest_steps(tmp_path, _load(tmp_path, "deep"), {})
    assert not [name for name in steps if name.startswith("m.") or ".sub." in name], steps
    assert steps["m[1].sub[0].first"] == "failed"
    assert steps["m[1].sub[0].second"] == "not run"
    assert steps["m[1].sub[1].first"] == steps["m[1].sub[1].second"] == "not run"
    assert steps["m[2].pre"] == steps["m[2].sub"] == "not run"
    assert steps["m[0].sub[0].second"] == "ok"


def test_a_scattered_recipe_that_never_started_lists_no_template_steps(tmp_path: Path) -> None:
    steps = _manifest_steps(tmp_path, _load(tmp_path, "early"), {"xs": ["a", "b"]})
    assert steps == {"stop": "failed", "sub": "not run"}


class BodyIn(BaseModel):
    val: File
    cycle: int = 0


class BodyOut(BaseModel):
    val: File
    flag: File | None = None


class LoopIn(BaseModel):
    val: File


class Vals(BaseModel):
    vals: list[File]


def test_a_loop_inside_a_scatter_lists_its_slices_iterations_only(tmp_path: Path) -> None:
    body = Cab(
        "body",
        ["/bin/sh", "-c", 'echo "$1" >> "$0"'],
        BodyIn,
        BodyOut,
        {"val": ParamMeta(positional=True, mutable=True), "cycle": ParamMeta(positional=True)},
    )
    sub = Recipe("sub", LoopIn)
    sub.add_loop(
        "L",
        body,
        max_iter=2,
        until="flag",
        carry={"val": "val"},
        index_input="cycle",
        val=sub.inputs.val,
    )
    recipe = Recipe("r", Vals)
    recipe.add_step("s", sub, scatter=["val"], val=recipe.inputs.vals)
    for name in ("v0.txt", "v1.txt"):
        (tmp_path / name).write_text("")
    steps = _manifest_steps(tmp_path, recipe, {"vals": ["v0.txt", "v1.txt"]})
    assert sorted(steps) == ["s", "s[0]", "s[0].L.1", "s[0].L.2", "s[1]", "s[1].L.1", "s[1].L.2"]


def _run_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str) -> list[Any]:
    path = tmp_path / "recipes.py"
    path.write_text(RECIPES)
    args = [f"{path}:{target}", "--json", "--no-cache", "--no-provenance", "-j", "1"]
    code, out, err = _ninja(capsys, "run", *args, "--workdir", str(tmp_path))
    assert code == 1, err
    steps: list[Any] = json.loads(out)["steps"]
    return steps


def _shown(entries: list[dict[str, Any]]) -> list[Any]:
    return [
        (e["name"], e["status"], _shown(e.get("slices", [])), _shown(e.get("steps", [])))
        for e in entries
    ]


def test_run_json_lists_the_steps_a_failed_slice_left_unstarted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "recipes.py"
    path.write_text(RECIPES.replace('["a", "b"]', '["a", "bad", "c"]'))
    code, out, err = _ninja(
        capsys,
        "run",
        f"{path}:r",
        "--json",
        "--no-cache",
        "--no-provenance",
        "--workdir",
        str(tmp_path),
    )
    assert code == 1, err
    (step,) = json.loads(out)["steps"]
    failed = step["slices"][1]
    assert _shown([failed]) == [
        (
            "sub[1]",
            "failed",
            [],
            [("sub[1].first", "failed", [], []), ("sub[1].second", "not run", [], [])],
        ),
    ]


def test_run_json_gives_an_unstarted_scattered_recipe_no_template_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _shown(_run_json(tmp_path, capsys, "early")) == [
        ("stop", "failed", [], []),
        ("sub", "not run", [], []),
    ]
