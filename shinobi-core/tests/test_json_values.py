"""The manifest (and ``--json``) held model and set inputs as
Python's ``str()`` text (``"solint=3 mode='p'"``, ``"{'b', 'a'}"``, ``"set()"``),
which cannot be fed back to ``--sol`` or ``run_recipe()``; they are JSON data now."""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path, PurePosixPath

import pytest
from cli_in_process import in_process
from pydantic import BaseModel, SecretStr

from shinobi.json_values import json_data


class Sol(BaseModel):
    solint: int = 1
    mode: str = "p"
    pw: SecretStr = SecretStr("hunter2")


class Colour(enum.Enum):  # str() gave "Colour.RED"
    RED = "red"


def test_a_model_is_its_json_dump_with_the_secret_masked() -> None:
    assert json_data({"sol": Sol(solint=3)}) == {
        "sol": {"solint": 3, "mode": "p", "pw": "**********"}
    }
    assert json_data([Sol()]) == [{"solint": 1, "mode": "p", "pw": "**********"}]


def test_a_set_is_a_sorted_list_and_an_empty_one_an_empty_list() -> None:
    assert json_data({"b", "a", "c"}) == ["a", "b", "c"]
    assert json_data(frozenset({3, 1, 2})) == [1, 2, 3]
    assert json_data(set()) == []
    assert json_data({1, "a"}) in ([1, "a"], ["a", 1])  # mixed: a stable order all the same


def test_other_values_as_pydantic_writes_them_and_floats_as_strict_json() -> None:
    assert json_data(Colour.RED) == "red"
    assert json_data(timedelta(days=1)) == "P1D"  # str() gave "1 day, 0:00:00"
    assert json_data(PurePosixPath("/a/b")) == "/a/b"
    assert json_data(SecretStr("x")) == "**********"
    assert json_data([float("nan"), {"x": float("-inf")}]) == ["NaN", {"x": "-Infinity"}]
    assert json_data({1: "a", None: "b"}) == {"1": "a", "null": "b"}


RECIPE = """\
from pydantic import BaseModel, SecretStr
import shinobi
from shinobi import Recipe

class Sol(BaseModel):
    solint: int = 1
    mode: str = "p"

class Out(BaseModel):
    sol: Sol
    s: set[str]

@shinobi.pystep
def show(sol: Sol, sols: list[Sol], s: set[str], e: frozenset[int]) -> Out:
    return Out(sol=sol, s=s)

class RIn(BaseModel):
    sol: Sol = Sol()
    sols: list[Sol] = []
    s: set[str] = set()
    e: frozenset[int] = frozenset()

class ROut(BaseModel):
    sol: Sol
    s: set[str]

r = Recipe("m", RIn, ROut)
r.add_step("p", show, sol=r.inputs.sol, sols=r.inputs.sols, s=r.inputs.s, e=r.inputs.e)
r.set_output("sol", r.outputs.p.sol)
r.set_output("s", r.outputs.p.s)
"""


def test_the_manifest_and_json_hold_inputs_and_outputs_as_data_that_feeds_back(
    capsys: pytest.CaptureFixture[str],
    recipe_file: Callable[[str, str], Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    path = recipe_file(RECIPE, "m.py")
    given = ["--sol", '{"solint": 3}', "--sols", '{"solint": 4}', "--s", "b", "--s", "a"]
    code, out, err = in_process(capsys, "run", f"{path}:r", *given, "--provenance", "--json")
    assert code == 0, err
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    document = json.loads(manifest.read_text())
    assert document["inputs"] == {
        "sol": {"solint": 3, "mode": "p"},
        "sols": [{"solint": 4, "mode": "p"}],
        "s": ["a", "b"],
        "e": [],
    }
    assert document["outputs"] == {"sol": {"solint": 3, "mode": "p"}, "s": ["a", "b"]}
    assert document["steps"][0]["outputs"] == document["outputs"]
    assert json.loads(out)["outputs"] == document["outputs"]
    # what was recorded is what the options take back
    inputs = document["inputs"]
    again = ["--sol", json.dumps(inputs["sol"]), "--sols", json.dumps(inputs["sols"][0])]
    again += [word for s in inputs["s"] for word in ("--s", s)]
    code, out, err = in_process(capsys, "run", f"{path}:r", *again, "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"] == document["outputs"]
