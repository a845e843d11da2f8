"""An output wrangler into a list output collects every match, in order (it used to
set the last match, which the list refused after the tool ran); one into a
mapping or a model, which no matched text can be, is refused when the cab is made."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe, Wrangler

PRINTS = "echo 'flagged: ant1 1'; echo 'flagged: ant2 2'; echo 'flagged: ant3 3' >&2"


class Flagged(BaseModel):
    flagged: list[str] = []
    counts: list[int] = []


def _flagger(command: str = PRINTS) -> Cab:
    return Cab(
        "flagger",
        ["sh", "-c", command],
        BaseModel,
        Flagged,
        wranglers=[
            Wrangler(r"flagged: (\S+)", "output", output="flagged"),
            Wrangler(r"flagged: \S+ (\d)", "output", output="counts"),
        ],
    )


def _run(cab: Cab, tmp_path: Path) -> dict[str, object]:
    recipe = Recipe("r", BaseModel, Flagged)
    recipe.add_step("t", cab)
    recipe.set_output("flagged", recipe.outputs.t.flagged)
    recipe.set_output("counts", recipe.outputs.t.counts)
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    return result.outputs


def test_a_list_output_collects_every_match_stdout_then_stderr(tmp_path: Path) -> None:
    outputs = _run(_flagger(), tmp_path)
    assert outputs == {"flagged": ["ant1", "ant2", "ant3"], "counts": [1, 2, 3]}


def test_a_list_output_no_line_matched_keeps_its_default(tmp_path: Path) -> None:
    assert _run(_flagger("echo nothing"), tmp_path) == {"flagged": [], "counts": []}


class Mapped(BaseModel):
    found: dict[str, str] = {}


def test_a_wrangler_into_a_mapping_is_refused_when_the_cab_is_made() -> None:
    said = (
        "cab 'tool': wrangler r'x (\\S+)' sets output 'found', a mapping or a model, which the"
        " text it matches can never be; type the output str (or int, float...), or a list of"
        " it to collect every match"
    )
    with pytest.raises(ValueError, match=re.escape(said)):
        Cab(
            "tool",
            ["true"],
            BaseModel,
            Mapped,
            wranglers=[Wrangler(r"x (\S+)", "output", output="found")],
        )
