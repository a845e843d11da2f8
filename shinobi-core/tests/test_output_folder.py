"""An input folder a step only puts its own outputs in is no shared rewrite.

Imaging N sets into one folder (``outdir`` given, image ``{outdir}/{ms.stem}-image.fits``)
ran its slices one at a time, locally and as ``--array=...%1``. Between different
steps the folder stays a read (a step reading it whole and writing into it looks the
same), and two writers of one file and an in-place folder are still ordered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel
from test_offload_fixtures import plan_of

from shinobi.backends.base import PathUse
from shinobi.config import load_config
from shinobi.offload.jobs import JobGraph, build_jobs
from shinobi.offload.ordering import derive_edges
from shinobi.runner import run_recipe
from shinobi.step_turns import plan_turns
from shinobi.steps import MS, Cab, Directory, File, ParamMeta, Recipe

# Records its own start and end next to the image it makes.
SCRIPT = (
    'n="$1/$(basename "$2" .ms)"; date +%s.%N > "$n.start"; sleep 0.4;'
    ' echo img > "$n-image.fits"; date +%s.%N > "$n.end"'
)


class ImIn(BaseModel):
    outdir: Directory
    ms: MS


class ImOut(BaseModel):
    image: File


def imager(*, mutable: bool = False) -> Cab:
    return Cab(
        "image",
        ["/bin/sh", "-c", SCRIPT, "image"],
        ImIn,
        ImOut,
        {
            "outdir": ParamMeta(positional=True, writable=mutable, mutable=mutable),
            "ms": ParamMeta(positional=True, writable=False),
            "image": ParamMeta(implicit="{outdir}/{ms.stem}-image.fits"),
        },
    )


class MosIn(BaseModel):
    imgs: Directory
    tag: Path = Path("all")


class MosOut(BaseModel):
    mosaic: File


mosaic = Cab(
    "mosaic",
    ["/bin/true"],
    MosIn,
    MosOut,
    {
        "imgs": ParamMeta(positional=True),
        "tag": ParamMeta(skip=True),
        "mosaic": ParamMeta(implicit="mosaic-{tag.stem}.fits"),
    },
)


class ManyIn(BaseModel):
    mss: list[MS]
    outdir: Directory = Path("imgs")


class ManyOut(BaseModel):
    images: list[File]


def scattered(tool: Cab) -> Recipe:
    recipe = Recipe("imaging", ManyIn, ManyOut, max_workers=4)
    recipe.add_step("img", tool, scatter=["ms"], ms=recipe.inputs.mss, outdir=recipe.inputs.outdir)
    recipe.set_output("images", recipe.outputs.img.image)
    return recipe


class TwoIn(BaseModel):
    a: MS
    b: MS
    outdir: Directory = Path("imgs")


def two_steps(second: str = "b") -> Recipe:
    recipe = Recipe("two", TwoIn, max_workers=4)
    recipe.add_step("ima", imager(), ms=recipe.inputs.a, outdir=recipe.inputs.outdir)
    ms = recipe.inputs.b if second == "b" else recipe.inputs.a
    recipe.add_step("imb", imager(), ms=ms, outdir=recipe.inputs.outdir)
    recipe.add_step("mos", mosaic, imgs=recipe.inputs.outdir)
    return recipe


MSS = {"mss": ["a.ms", "b.ms", "c.ms"]}


def compiled(recipe: Recipe, inputs: dict[str, Any]) -> JobGraph:
    graph = build_jobs(plan_of(recipe, inputs, "/data"), "/data", "run")
    derive_edges(graph)
    return graph


def waits(graph: JobGraph) -> dict[str, list[tuple[str, str]]]:
    return {
        j.name: sorted((graph.jobs[e.before].name, e.kind) for e in j.edges) for j in graph.jobs
    }


def test_compiled_slices_making_distinct_files_in_one_folder_form_a_free_array() -> None:
    job = compiled(scattered(imager()), MSS).jobs[0]
    assert job.serial is None and not job.notes, job.notes


def test_compiled_slices_rewriting_the_folder_in_place_still_take_turns() -> None:
    job = compiled(scattered(imager(mutable=True)), MSS).jobs[0]
    assert job.serial == "/data/imgs"
    assert "its slices run one at a time" in job.notes[0]


def test_two_steps_putting_files_in_one_folder_keep_their_order() -> None:
    """Between steps the folder stays a read: nothing tells ``imb`` from a step
    that reads every image in ``imgs`` and writes one more (a mosaic)."""
    graph = compiled(two_steps(), {"a": "a.ms", "b": "b.ms"})
    assert waits(graph) == {
        "ima": [],
        "imb": [("ima", "mutate-then-read")],
        "mos": [("ima", "mutate-then-read"), ("imb", "mutate-then-read")],
    }


def test_two_steps_making_the_same_file_are_still_ordered() -> None:
    graph = compiled(two_steps(second="a"), {"a": "a.ms", "b": "b.ms"})
    assert [before for before, _ in waits(graph)["imb"]] == ["ima"]


def test_a_local_run_with_several_workers_keeps_the_same_turns() -> None:
    plan = plan_of(two_steps(), {"a": "a.ms", "b": "b.ms"}, "/data")
    names = {n.index: n.name for n in plan.graph.nodes}
    turns = {names[i]: sorted(names[w] for w in ws) for i, ws in plan_turns(plan, 4).items()}
    assert turns == {"imb": ["ima"], "mos": ["ima", "imb"]}


def test_the_slices_run_together_and_nothing_is_said(tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.ms").mkdir()
    config = load_config({"execution.max_workers": 3, "cache.enabled": False})
    result = run_recipe(scattered(imager()), MSS, cwd=tmp_path, config=config)
    assert result.ok, result.error
    assert not any("one at a time" in w for w in result.warnings), result.warnings
    read = [
        (
            float((tmp_path / f"imgs/{n}.start").read_text()),
            float((tmp_path / f"imgs/{n}.end").read_text()),
        )
        for n in ("a", "b", "c")
    ]
    assert max(start for start, _ in read) < min(end for _, end in read), "slices ran in turn"


def test_only_each_step_s_own_output_folder_is_left_out() -> None:
    """A nested recipe's slice holds several steps: the folder one of them puts its
    image in may be what another reads whole, and that read stays."""
    from shinobi.offload.ordering import step_uses

    uses = [
        PathUse("/d/imgs", "input", "outdir", "directory", writable=False),
        PathUse("/d/a.ms", "input", "ms"),
        PathUse("/d/imgs/a-image.fits", "output", "image"),
    ]
    assert [u.field for u in step_uses(uses)] == ["ms", "image"]
    in_place = PathUse("/d/imgs", "input", "outdir", "directory", mutable=True)
    assert step_uses([in_place, uses[2]])[0] is in_place
    glob = PathUse("/d/imgs/a-*.fits", "output", "images", pattern=True)
    assert step_uses([uses[0], glob]) == [glob]
