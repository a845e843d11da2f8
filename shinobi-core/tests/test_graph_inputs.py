"""``ninja graph`` says that inputs given to it change nothing.

It takes a recipe's inputs (so a run's command line can be drawn as written)
but draws the declared graph whatever they are; it used to take them without
a word, as if the drawing were of that run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import in_process as _ninja

RECIPE = """
import shinobi

@shinobi.pystep
def rq(req: str, n: int = 1) -> str:
    return req
"""


@pytest.fixture
def target(tmp_path: Path) -> str:
    path = tmp_path / "rq.py"
    path.write_text(RECIPE)
    return f"{path}:rq"


def test_given_inputs_are_said_to_change_nothing(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _ninja(capsys, "graph", target, "--req", "x", "--n", "3", "--format", "json")
    assert code == 0, err
    assert json.loads(out)  # stdout stays the graph alone
    line = next(line for line in err.splitlines() if "warning" in line)
    assert "(req, n) do not change it" in line and "--dryrun" in line, err


def test_no_inputs_no_warning(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _ninja(capsys, "graph", target)
    assert out.strip(), out  # the graph itself
    assert code == 0, err
    assert "warning" not in err, err
