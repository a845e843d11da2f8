"""Ordering edges from in-place mutation: who waits for whom, and who stays parallel."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from test_offload_fixtures import MsIn, column_reader, plan_of, reader, rewriter, touch

from shinobi.offload.jobs import JobGraph, build_jobs
from shinobi.offload.ordering import derive_edges
from shinobi.steps import Cab, InputRef, OutputRef, ParamMeta, Recipe, StepRef


def ordered(recipe: Recipe, inputs: dict[str, Any] | None = None, cwd: str = "/data") -> JobGraph:
    graph = build_jobs(plan_of(recipe, inputs, cwd), cwd, "run")
    derive_edges(graph)
    return graph


def edges(graph: JobGraph) -> dict[str, list[tuple[str, str]]]:
    return {
        job.name: [(graph.jobs[e.before].name, e.kind) for e in job.edges] for job in graph.jobs
    }


def selfcal() -> Recipe:
    steps = [
        StepRef(name, rewriter(name), {"ms": InputRef("ms")})
        for name in ("flag", "gaincal", "applycal")
    ] + [StepRef(name, reader(name), {"ms": InputRef("ms")}) for name in ("image", "inspect")]
    return Recipe(name="selfcal", inputs_model=MsIn, steps=steps)


def test_three_rewriters_are_chained_and_two_readers_stay_parallel() -> None:
    graph = ordered(selfcal(), {"ms": "/data/obs.ms"})
    assert edges(graph) == {
        "flag": [],
        "gaincal": [("flag", "mutate-then-mutate")],
        "applycal": [("gaincal", "mutate-then-mutate")],
        "image": [("applycal", "mutate-then-read")],
        "inspect": [("applycal", "mutate-then-read")],
    }
    assert graph.jobs[1].edges[0].detail == "/data/obs.ms"
    assert graph.parallel_readers == ["image, inspect only read /data/obs.ms: left parallel"]


def test_readers_a_chain_already_orders_are_not_said_to_be_left_parallel() -> None:
    """--explain called a loop's chained iterations, which only read a path, parallel."""
    from pydantic import BaseModel

    from shinobi.steps import Cab, File, OutputRef, ParamMeta

    class ChainIn(BaseModel):
        ms: Path
        tag: str
        prev: Path | None = None

    class ChainOut(BaseModel):
        done: File

    meta = {
        "ms": ParamMeta(positional=True, writable=False),
        "tag": ParamMeta(skip=True),
        "prev": ParamMeta(skip=True),
        "done": ParamMeta(implicit="{tag}.done"),
    }
    looks = Cab("looks", ["/bin/true"], ChainIn, ChainOut, meta)
    steps = [
        StepRef("cal", rewriter("cal"), {"ms": InputRef("ms")}),  # a writer: the path is ordered
        StepRef("first", looks, {"ms": InputRef("ms"), "tag": "first"}),
    ]
    for name, before in (("second", "first"), ("third", "second")):
        wiring = {"ms": InputRef("ms"), "tag": name, "prev": OutputRef(before, "done")}
        steps.append(StepRef(name, looks, wiring))
    steps.append(StepRef("aside", looks, {"ms": InputRef("ms"), "tag": "aside"}))
    graph = ordered(Recipe(name="r", inputs_model=MsIn, steps=steps), {"ms": "/data/obs.ms"})
    # it said "first, second, third, aside ... left parallel"; only 'aside' is unordered
    assert graph.parallel_readers == []


def test_a_writer_after_readers_waits_for_all_of_them() -> None:
    recipe = Recipe(
        name="r",
        inputs_model=MsIn,
        steps=[
            StepRef("look", reader("look"), {"ms": InputRef("ms")}),
            StepRef("peek", reader("peek"), {"ms": InputRef("ms")}),
            StepRef("cal", rewriter("cal"), {"ms": InputRef("ms")}),
        ],
    )
    assert edges(ordered(recipe))["cal"] == [
        ("look", "read-then-mutate"),
        ("peek", "read-then-mutate"),
    ]


def test_only_readers_means_no_edges() -> None:
    recipe = Recipe(
        name="r",
        inputs_model=MsIn,
        steps=[StepRef(n, reader(n), {"ms": InputRef("ms")}) for n in ("a", "b", "c")],
    )
    assert all(not e for e in edges(ordered(recipe)).values())


def test_every_spelling_of_one_path_is_one_path() -> None:
    recipe = Recipe(
        name="r",
        inputs_model=MsIn,
        steps=[
            StepRef("by_input", rewriter("a"), {"ms": InputRef("ms")}),
            StepRef("by_literal", rewriter("b"), {"ms": Path("/data/obs.ms")}),
            StepRef("relative", rewriter("c"), {"ms": Path("./obs.ms")}),
            StepRef("by_default", rewriter("d"), {}),
            StepRef("dotted", rewriter("e"), {"ms": Path("/data/sub/../obs.ms")}),
        ],
    )
    found = edges(ordered(recipe, {"ms": "obs.ms"}, cwd="/data"))
    assert found == {
        "by_input": [],
        "by_literal": [("by_input", "mutate-then-mutate")],
        "relative": [("by_literal", "mutate-then-mutate")],
        "by_default": [("relative", "mutate-then-mutate")],
        "dotted": [("by_default", "mutate-then-mutate")],
    }


def test_a_column_inside_an_ms_is_the_ms() -> None:
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("cal", rewriter("cal"), {"ms": Path("/data/obs.ms")}),
            StepRef("col", column_reader("col"), {"column": Path("/data/obs.ms/CORRECTED")}),
            StepRef("other", column_reader("other"), {"column": Path("/data/other.ms/DATA")}),
        ],
    )
    graph = ordered(recipe)
    assert edges(graph) == {"cal": [], "col": [("cal", "mutate-then-read")], "other": []}
    assert graph.jobs[1].edges[0].detail == "/data/obs.ms/CORRECTED (inside /data/obs.ms)"


def test_a_symlink_resolves_to_what_it_names(tmp_path: Path) -> None:
    real = tmp_path / "real.ms"
    real.mkdir()
    link = tmp_path / "link.ms"
    os.symlink(real, link)
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("a", rewriter("a"), {"ms": real}),
            StepRef("b", rewriter("b"), {"ms": link}),
        ],
    )
    assert edges(ordered(recipe, cwd=str(tmp_path)))["b"] == [("a", "mutate-then-mutate")]


def test_an_output_is_a_write_and_a_wired_edge_is_not_doubled() -> None:
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("make", touch, {"path": Path("/data/x")}),
            StepRef("again", touch, {"path": OutputRef("make", "path")}),
            StepRef("unwired", touch, {"path": Path("/data/x")}),
        ],
    )
    assert edges(ordered(recipe)) == {
        "make": [],
        "again": [("make", "wired")],
        "unwired": [("again", "mutate-then-mutate")],
    }


def test_a_read_only_output_is_not_a_write() -> None:
    class Out(BaseModel):
        path: Path | None = None

    class In(BaseModel):
        path: Path

    peek = Cab(
        name="peek",
        command="/bin/true",
        inputs_model=In,
        outputs_model=Out,
        field_meta={"path": ParamMeta(positional=True, writable=False)},
    )
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("a", peek, {"path": Path("/d/x")}),
            StepRef("b", peek, {"path": Path("/d/x")}),
        ],
    )
    assert all(not e for e in edges(ordered(recipe)).values())


def test_a_harvest_glob_writes_its_directory() -> None:
    class Found(BaseModel):
        images: list[Path] = []

    class Dir(BaseModel):
        directory: Path

    imager = Cab(
        name="imager",
        command="/bin/true",
        outputs_model=Found,
        field_meta={"images": ParamMeta(harvest="/data/images/*.fits")},
    )
    lister = Cab(
        name="lister",
        command="/bin/ls",
        inputs_model=Dir,
        field_meta={"directory": ParamMeta(positional=True, writable=False)},
    )
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("image", imager, {}),
            StepRef("list", lister, {"directory": Path("/data/images")}),
        ],
    )
    assert edges(ordered(recipe))["list"] == [("image", "mutate-then-read")]


def test_derived_edges_follow_the_local_order_and_never_cycle() -> None:
    recipe = selfcal()
    graph = ordered(recipe, {"ms": "/data/obs.ms"})
    for job in graph.jobs:
        assert all(edge.before < job.index for edge in job.edges)


def test_a_link_followed_by_dotdot_leads_where_the_kernel_says(tmp_path: Path) -> None:
    """``lnk/../obs.ms`` with ``lnk -> data/deep`` is ``data/obs.ms``, not ``obs.ms``:
    two spellings of one MS must be found the same, or its rewriters run at once."""
    from shinobi.offload.ordering import Canonicaliser

    (tmp_path / "data" / "deep").mkdir(parents=True)
    (tmp_path / "data" / "obs.ms").mkdir()
    (tmp_path / "lnk").symlink_to(tmp_path / "data" / "deep")
    canonical = Canonicaliser()
    assert canonical(f"{tmp_path}/lnk/../obs.ms") == str((tmp_path / "data" / "obs.ms").resolve())
    assert canonical(f"{tmp_path}/data/./obs.ms") == str((tmp_path / "data" / "obs.ms").resolve())


def test_slices_that_share_a_path_one_rewrites_run_one_at_a_time(tmp_path: Path) -> None:
    """Edges order jobs; a scatter's slices are one array's tasks and would start
    together: appending to one shared log, they must not."""

    class AppendIn(BaseModel):
        tag: str
        log: Path

    append = Cab(
        name="append",
        command="/bin/true",
        inputs_model=AppendIn,
        field_meta={
            "tag": ParamMeta(positional=True),
            "log": ParamMeta(positional=True, mutable=True),
        },
    )
    shared = Recipe(
        name="r",
        steps=[StepRef("a", append, {"tag": ["a", "b"], "log": tmp_path / "l"}, scatter=("tag",))],
    )
    apart = Recipe(
        name="r",
        steps=[
            StepRef(
                "a",
                append,
                {"tag": ["a", "b"], "log": [tmp_path / "1", tmp_path / "2"]},
                scatter=("tag", "log"),
            )
        ],
    )
    for recipe, serial in ((shared, str(tmp_path / "l")), (apart, None)):
        assert ordered(recipe, cwd=str(tmp_path)).jobs[0].serial == serial


class TagIn(BaseModel):
    tag: str


class Named(BaseModel):
    image: Path | None = None


def test_slices_writing_one_output_are_named_in_the_compiled_note(tmp_path: Path) -> None:
    """Taking turns keeps them from interleaving, not from replacing each other's product."""
    imager = Cab(
        name="imager",
        command="/bin/true",
        inputs_model=TagIn,
        outputs_model=Named,
        field_meta={"tag": ParamMeta(positional=True), "image": ParamMeta(implicit="img.fits")},
    )
    recipe = Recipe(name="r", steps=[StepRef("i", imager, {"tag": ["a", "b"]}, scatter=("tag",))])
    (job,) = ordered(recipe, cwd=str(tmp_path)).jobs
    assert job.serial == str(tmp_path / "img.fits")
    assert job.notes[-1].startswith(f"slices [0] and [1] both write {tmp_path / 'img.fits'}")


def test_one_path_short_form_orders_exactly_as_the_general_walk() -> None:
    """Every sequence of up to five accesses by three jobs to one path: the short
    form a large compile takes links and notes exactly what the general walk does."""
    import itertools

    from shinobi.offload import ordering

    def walk(how: Any, accesses: list[Any]) -> tuple[list[Any], list[Any]]:
        links: list[Any] = []
        notes: list[Any] = []
        how(
            "/d/f",
            accesses,
            lambda before, after, kind: links.append((before.job, after.job, kind)),
            lambda path, readers: notes.append((path, [r.job for r in readers])),
        )
        return links, notes

    compared = 0
    for length in range(1, 6):
        for shape in itertools.product(
            [(j, w) for j in range(3) for w in (False, True)], repeat=length
        ):
            accesses = [ordering._Access(job, "/d/f", write) for job, write in sorted(shape)]
            assert walk(ordering._sequence_one_path, accesses) == walk(
                ordering._sequence, accesses
            ), accesses
            compared += 1
    assert compared > 7000


def test_readers_of_an_ms_and_of_a_table_in_it_are_said_to_be_left_parallel() -> None:
    """--explain named no reader when one read the MS and the other a table of it:
    each was alone on its own path, though they ran side by side after the writer."""
    recipe = Recipe(
        name="r",
        inputs_model=MsIn,
        steps=[
            StepRef("flag", rewriter("flag"), {"ms": InputRef("ms")}),
            StepRef("col", column_reader("col"), {"column": Path("/data/obs.ms/CORRECTED")}),
            StepRef("image", reader("image"), {"ms": InputRef("ms")}),
        ],
    )
    graph = ordered(recipe, {"ms": "/data/obs.ms"})
    assert graph.parallel_readers == [
        "col, image only read /data/obs.ms (or paths in it): left parallel"
    ]
