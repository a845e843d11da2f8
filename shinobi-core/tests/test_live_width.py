"""The live view cut its lines to the terminal by characters: a step name of wide
(CJK) characters still wrapped, the redraw moved up fewer rows than were drawn,
and stale lines stayed on the screen. Lines are cut by the columns they take."""

from __future__ import annotations

import io
import os
import shutil
from typing import Any

from shinobi.render.progress import LiveProgress
from shinobi.render.terminal_text import columns


def test_a_wide_step_name_is_cut_to_the_terminal_width(monkeypatch: Any) -> None:
    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((30, 20)))
    stream = io.StringIO()
    view = LiveProgress(stream, total=2)
    try:
        view.step_started("b_" + "漢" * 40, {})
        with view.lock:
            view._draw()
    finally:
        view.close()
    drawn = [line.split("\x1b[J")[-1] for line in stream.getvalue().split("\n")]
    running = [line for line in drawn if "running b_" in line]
    assert running and all(columns(line) <= 29 for line in drawn)
    assert running[-1] == "  running b_" + "漢" * 8  # 28 columns: a ninth would take 30


def test_cut_counts_columns_not_characters() -> None:
    from shinobi.render.terminal_text import cut

    assert cut("abcdef", 4) == "abcd"
    assert cut("漢字漢字", 5) == "漢字"  # a wide character never split over the edge
    assert cut("漢字", 4) == "漢字"
    assert cut("cafe\u0301s", 4) == "cafe\u0301"  # a combining mark takes no column
    assert cut("é" * 10, 3) == "ééé"
