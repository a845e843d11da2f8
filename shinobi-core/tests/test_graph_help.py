"""``ninja graph TARGET --help`` marked inputs [required].

``ninja graph`` runs nothing and draws the graph without any input, so its
help says the inputs are optional there; ``run`` and ``compile`` still mark
an input without a default [required].
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process as _ninja

RECIPE = """
import shinobi

@shinobi.pystep
def rq(req: str) -> str:
    return req
"""


@pytest.fixture
def target(tmp_path: Path) -> str:
    path = tmp_path / "rq.py"
    path.write_text(RECIPE)
    return f"{path}:rq"


def test_graph_help_says_inputs_are_optional(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _ninja(capsys, "graph", target, "--help")
    assert code == 0, err
    assert "--req" in out, out
    assert "[required]" not in out, out
    assert "all are optional here, as this command runs nothing" in " ".join(out.split()), out
    code, out, err = _ninja(capsys, "graph", target)
    assert code == 0, err  # as its help says: no input needed


@pytest.mark.parametrize("command", ["run", "compile"])
def test_commands_that_use_the_inputs_still_mark_them_required(
    target: str, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, out, err = _ninja(capsys, command, target, "--help")
    assert code == 0, err
    line = next(line for line in out.splitlines() if "--req" in line)
    assert "[required]" in line, out
    assert "optional" not in out, out
