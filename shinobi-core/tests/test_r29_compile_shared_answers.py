"""Eligibility answers once per producer output: every reader still gets its own refusal."""

from __future__ import annotations

from pydantic import BaseModel
from test_offload_fixtures import plan_of

from shinobi.offload.eligibility import check_offloadable
from shinobi.steps import Cab, OutputRef, Recipe, StepRef, Wrangler


class CountOut(BaseModel):
    count: int | None = None
    total: int | None = None


class CountIn(BaseModel):
    count: int | None = None


def test_every_reader_of_a_refused_output_is_named_and_each_output_answered_apart() -> None:
    counter = Cab(
        name="counter",
        command="/bin/echo",
        outputs_model=CountOut,
        wranglers=[Wrangler(r"(\d+)", "output", output="count")],
    )
    user = Cab(name="user", command="/bin/echo", inputs_model=CountIn)
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("count", counter, {}),
            StepRef("a", user, {"count": OutputRef("count", "count")}),
            StepRef("b", user, {"count": OutputRef("count", "count")}),
            StepRef("c", user, {"count": OutputRef("count", "total")}),
        ],
    )
    said = [r.reason for r in check_offloadable(plan_of(recipe))]
    assert said == [
        "step 'a', input 'count': count.count is set by a wrangler from the tool's output,"
        " known only after it runs",
        "step 'b', input 'count': count.count is set by a wrangler from the tool's output,"
        " known only after it runs",
        "step 'c', input 'count': count.total is not a path (it is declared int | None);"
        " only filesystem paths can cross between offloaded steps",
    ]
