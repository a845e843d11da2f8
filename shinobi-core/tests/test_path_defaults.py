"""A path field's ``str`` default (``ms: MS = "obs.ms"``) is a path in the run as it
is in the dry run: pydantic leaves defaults unvalidated, so the run used to fill
``{ms.stem}`` from a ``str`` (an internal error) and hand a pystep a ``str``."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

import shinobi
from shinobi.graph import build_graph
from shinobi.plan import plan_graph
from shinobi.runner import run_recipe
from shinobi.steps import MS, Cab, File, ParamMeta, Recipe


class ImageIn(BaseModel):
    ms: MS = "obs.ms"  # type: ignore[assignment]  # the str default under test


class ImageOut(BaseModel):
    image: File


def _imager() -> Cab:
    return Cab(
        "img",
        ["sh", "-c", 'touch "$(basename "$0" .ms)-image.fits"'],
        ImageIn,
        ImageOut,
        {"ms": ParamMeta(positional=True), "image": ParamMeta(implicit="{ms.stem}-image.fits")},
    )


def _recipe() -> Recipe:
    recipe = Recipe("r", BaseModel, ImageOut)
    recipe.add_step("image", _imager())  # ms left to its default
    recipe.set_output("image", recipe.outputs.image.image)
    return recipe


def test_a_str_path_default_fills_a_template_in_the_run_as_in_the_dry_run(
    tmp_path: Path,
) -> None:
    (tmp_path / "obs.ms").mkdir()
    planned = plan_graph(build_graph(_recipe()), {}, str(tmp_path))
    assert planned.outputs["image"] == "obs-image.fits"
    result = run_recipe(_recipe(), cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    assert str(result.outputs["image"]) == "obs-image.fits"
    assert (tmp_path / "obs-image.fits").exists()


@shinobi.pystep
def kind_of(f: File = "data.txt") -> str:  # type: ignore[assignment]  # the str default
    return type(f).__name__


def test_a_pystep_gets_its_str_path_default_as_a_path(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("hello\n")

    class Out(BaseModel):
        result: str

    recipe = Recipe("r", BaseModel, Out)
    recipe.add_step("k", kind_of)
    recipe.set_output("result", recipe.outputs.k.result)
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    assert result.outputs["result"] == "PosixPath"
