"""The wiring details of compiled edges and the environment of compiled invocations,
as flattening spells and shares them (shinobi.offload.jobs)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel
from test_offload_fixtures import PathIn, PathOut, plan_of, touch

from shinobi.offload.jobs import build_jobs, describe_edge
from shinobi.steps import Cab, InputRef, OutputRef, ParamMeta, Recipe, StepRef


class ManyIn(BaseModel):
    first: Path
    second: Path
    more: list[Path]
    label: str = "x"


gather = Cab(
    name="gather",
    command="/bin/true",
    inputs_model=ManyIn,
    outputs_model=PathOut,
    field_meta={name: ParamMeta(positional=True) for name in ("first", "second", "more")},
    env={"OMP_NUM_THREADS": "2"},
)


def fan_in() -> Recipe:
    """``use`` takes ``make``'s output three ways (two plain, one in a list) and
    ``other``'s in the list only, with a plain value among its wirings."""
    return Recipe(
        name="fan_in",
        inputs_model=PathIn,
        steps=[
            StepRef("make", touch, {"path": InputRef("path")}),
            StepRef("other", touch, {"path": "o"}),
            StepRef(
                "use",
                gather,
                {
                    "first": OutputRef("make", "path"),
                    "label": "plain",
                    "more": [OutputRef("make", "path"), OutputRef("other", "path")],
                    "second": OutputRef("make", "path"),
                },
            ),
            StepRef("again", gather, {"first": "a", "second": "b", "more": ["c"]}),
        ],
    )


def test_each_edge_lists_its_wirings_in_wiring_order_lists_included() -> None:
    graph = build_jobs(plan_of(fan_in(), {"path": "x"}), "/w", "run")
    use = graph.jobs[2]
    assert [(e.before, e.kind, e.detail) for e in use.edges] == [
        (0, "wired", "first <- make.path, more <- make.path, second <- make.path"),
        (1, "wired", "more <- other.path"),
    ]
    assert describe_edge(graph, use, use.edges[1]) == "after other: wired (more <- other.path)"


def test_a_cabs_jobs_get_its_environment_as_it_was_when_compiled() -> None:
    plan = plan_of(fan_in(), {"path": "x"})
    graph = build_jobs(plan, "/w", "run")
    use, again = graph.jobs[2], graph.jobs[3]
    gather.env["LATER"] = "1"  # a change to the cab after compiling reaches no job
    try:
        for job in (use, again):
            assert dict(job.invocations[0].env) == {"OMP_NUM_THREADS": "2"}
            assert job.commands[0][:3] == ["env", "--", "OMP_NUM_THREADS=2"]
        assert use.invocations[0].env is not gather.env
        assert not graph.jobs[0].invocations[0].env  # a cab with none: none
    finally:
        del gather.env["LATER"]
