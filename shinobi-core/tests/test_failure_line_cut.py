"""The tool's line a failure quotes is marked where it is cut.

The FAILED line and the final ``ninja: error:`` stopped at 300 characters
without a mark, so a cut path or message read as whole; only the ``  | ``
lines after them said they were cut.
"""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (
            137,
            "exited with code 137 (128 + 9: what a shell exits with when a command it ran was"
            " killed by SIGKILL, usually the out-of-memory killer; check `dmesg` and the memory"
            " the step declares): Killed",
        ),
        (
            139,
            "exited with code 139 (128 + 11: what a shell exits with when a command it ran"
            " was killed by SIGSEGV): Killed",
        ),
        (2, "exited with code 2: Killed"),
        (128, "exited with code 128: Killed"),
        (255, "exited with code 255: Killed"),  # 127 is no signal a shell reports
    ],
)
def test_a_shells_code_for_a_killed_command_is_read_as_such(code: int, said: str) -> None:
    """A tool killed for memory under ``sh -c`` read "exited with code 137"."""
    assert describe_failure(BackendRun(returncode=code, stderr="Killed\n")) == said
