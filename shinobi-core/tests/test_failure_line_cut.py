"""The tool's line a failure quotes is marked where it is cut.

The FAILED line and the final ``ninja: error:`` stopped at 300 characters
without a mark, so a cut path or message read as whole; only the ``  | ``
lines after them said they were cut.
"""

from __future__ import annotations

from shinobi.backends.base import BackendRun
from shinobi.failures import QUOTED_LINE, cut_line, describe_failure


def test_a_long_last_line_is_quoted_cut_and_marked() -> None:
    said = describe_failure(BackendRun(returncode=4, stderr="E" * 500 + "END\n"))
    assert said == f"exited with code 4: {'E' * QUOTED_LINE} [... cut at {QUOTED_LINE} characters]"


def test_a_line_that_fits_is_quoted_whole() -> None:
    line = "x" * QUOTED_LINE
    assert cut_line(line) == line
    assert describe_failure(BackendRun(returncode=1, stderr=f"{line}\n")) == (
        f"exited with code 1: {line}"
    )
