"""What a failed tool printed is echoed without the escapes that would act on the
user's terminal (a window title, a cleared screen), its colours too."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shinobi.render.terminal_text import columns, for_terminal, padded

RECIPE = r"""
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta

class I(BaseModel):
    script: str = (
        "printf 'start\\n\\033]0;pwned\\007\\033[2Jcleared \\033[31mred\\033[0m\\n' >&2;"
        " exit 3"
    )

class O(BaseModel):
    pass

loud = Cab("loud", "sh -c", I, O, {"script": ParamMeta(positional=True)})
"""


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text", "plain text"),
        ("a\x1b]0;title\x07b", "ab"),
        ("x\x1b[2Jy\x1b[Hz", "xyz"),
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("tab\tkept", "tab\tkept"),
        ("c1\x9b2Jq\x07", "c12Jq"),
        ("link \x1b]8;;http://x\x1b\\here\x1b]8;;\x1b\\", "link here"),
    ],
)
def test_escapes_that_act_on_a_terminal_are_removed(raw: str, shown: str) -> None:
    assert for_terminal(raw) == shown


def test_a_failed_step_s_output_is_echoed_without_them(tmp_path: Path) -> None:
    (tmp_path / "r.py").write_text(textwrap.dedent(RECIPE))
    ninja = Path(sys.executable).parent / "ninja"
    proc = subprocess.run(
        [str(ninja), "run", "r.py:loud", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "\x1b]" not in proc.stderr and "\x1b[2J" not in proc.stderr, repr(proc.stderr)
    assert "cleared red" in proc.stderr
    log = next((tmp_path / ".shinobi" / "runs").glob("*/logs/loud.err")).read_text()
    assert "\x1b]0;pwned\x07" in log  # the log keeps what the tool wrote


def test_wide_names_line_up_in_a_table_and_a_box() -> None:
    """A CJK step name put `ninja status` columns and a dry-run box out of line."""
    from shinobi.launch.render import _table
    from shinobi.render.dryrun import _box

    assert columns("日本") == 4 and columns("e\u0301") == 1 and columns("plain") == 5
    assert padded("日本", 6) == "日本  "
    lines = _table(["STEP", "STATE"], [["日本語", "running"], ["plain", "pending"]])
    starts = {columns(line.split("running")[0]) for line in lines if "running" in line}
    starts |= {columns(line.split("pending")[0]) for line in lines if "pending" in line}
    assert len(starts) == 1
    box = _box("日本語のステップ", "cab · native", ["$ /bin/echo '観測'", "plain"], "")
    assert len({columns(line) for line in box}) == 1
