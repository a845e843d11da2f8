"""``ninja logs RUN STEP`` on a scattered step some of whose slices were taken from
the step cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_logs_records import cached_from, logs, write_run

RAN = "20260101-000000-aaaaaa"
LATER = "20260101-000001-bbbbbb"


def test_the_cached_slices_of_a_scatter_are_named_not_silently_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--words a --words c` after a run of a, b, c: say[0] (a) came from the
    # cache, say[1] (c) ran. Printing only c's log would read as "a printed
    # nothing"; the note says where a's output is.
    ran = write_run(tmp_path, RAN, [{"name": "say[0]", "status": "ok"}])
    (ran / "logs" / "say[0].out").write_text("a\n")
    later = write_run(
        tmp_path, LATER, [cached_from(RAN, "say[0]"), {"name": "say[1]", "status": "ok"}]
    )
    (later / "logs" / "say[1].out").write_text("c\n")
    code, out, err = logs(capsys, LATER, "say", "--workdir", str(tmp_path))
    assert code == 0, err
    assert out == "c\n"
    assert err.count("\n") == 1
    assert "say[0]" in err and f"step cache of run {RAN}" in err
    assert f"`ninja logs {RAN} say`" in err
    code, out, err = logs(capsys, LATER, "say[1]", "--workdir", str(tmp_path))
    assert (code, out, err) == (0, "c\n", "")  # a slice that ran: nothing to add
