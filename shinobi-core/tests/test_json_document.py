"""``--json`` documents are strict JSON, whatever floats a step's outputs hold."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import pytest
from cli_in_process import in_process

from shinobi.cli.machine_output import json_document

RECIPE = """
import shinobi

@shinobi.pystep
def measure() -> dict:
    return {"flux": float("nan"), "peak": float("inf"), "floor": float("-inf"), "snr": 4.5}
"""


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_floats_are_named_not_written_bare() -> None:
    data = {"a": [math.nan, math.inf, -math.inf, 1.5, (2.0, math.nan)], "b": None}
    assert _strict(json_document(data)) == {
        "a": ["NaN", "Infinity", "-Infinity", 1.5, [2.0, "NaN"]],
        "b": None,
    }


def test_run_json_of_a_nan_output_parses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "r.py").write_text(textwrap.dedent(RECIPE))
    monkeypatch.chdir(tmp_path)
    code, out, err = in_process(capsys, "run", "r.py:measure", "--json", "--no-cache")
    assert code == 0, err
    document = _strict(out)
    assert isinstance(document, dict)
    assert document["outputs"]["result"] == {
        "flux": "NaN",
        "peak": "Infinity",
        "floor": "-Infinity",
        "snr": 4.5,
    }


def test_the_manifest_of_a_nan_output_is_strict_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest is read by programs too (``ninja report``, a user's own script):
    a NaN output was written there as a bare ``NaN``, which strict parsers refuse."""
    (tmp_path / "r.py").write_text(textwrap.dedent(RECIPE))
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(capsys, "run", "r.py:measure", "--provenance", "--no-cache")
    assert code == 0, err
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    document = _strict(manifest.read_text())
    assert isinstance(document, dict)
    (step,) = document["steps"]
    assert step["outputs"]["result"]["flux"] == "NaN"
    assert step["outputs"]["result"]["floor"] == "-Infinity"
