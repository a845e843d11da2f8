"""The live view cut its lines to the terminal by characters: a step name of wide
(CJK) characters still wrapped, the redraw moved up fewer rows than were drawn,
and stale lines stayed on the screen. Lines are cut by the columns they take,
to the terminal's own width however narrow, and the view is no taller than
the terminal."""

from __future__ import annotations

import io
import os
from typing import Any

from shinobi.render import progress
from shinobi.render.progress import LiveProgress
from shinobi.render.terminal_text import columns


def test_a_wide_step_name_is_cut_to_the_terminal_width(monkeypatch: Any) -> None:
    monkeypatch.setattr(progress, "_terminal_size", lambda _: os.terminal_size((30, 20)))
    stream = io.StringIO()
    view = LiveProgress(stream, total=2)
    try:
        view.step_started("b_" + "漢" * 40, {})
        with view.lock:
            view._draw()
    finally:
        view.close()
    drawn = [line.split("\x1b[J")[-1] for line in stream.getvalue().split("\n")][:-2]
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


def _drawn(monkeypatch: Any, size: tuple[int, int], running: list[str]) -> list[str]:
    """The rows of one frame of the view on a terminal of ``size`` (columns, rows)."""
    monkeypatch.setattr(progress, "_terminal_size", lambda _: os.terminal_size(size))
    stream = io.StringIO()
    view = LiveProgress(stream, total=len(running))
    view.stop.set()  # one frame, drawn here
    view.thread.join()
    for name in running:
        view.step_started(name, {})
    with view.lock:
        view._draw()
    return stream.getvalue().split("\n")[:-1]


def test_a_terminal_narrower_than_21_columns_gets_lines_that_fit(monkeypatch: Any) -> None:
    """Cut to 20 columns at least, a line wrapped on a 12-column terminal."""
    drawn = _drawn(monkeypatch, (12, 20), ["calibrate"])
    assert drawn and all(columns(line) <= 11 for line in drawn)


def test_the_view_is_no_taller_than_the_terminal(monkeypatch: Any) -> None:
    """Eight running steps and a summary on a 6-row terminal scrolled the top
    rows into the scrollback, where no redraw erases them."""
    drawn = _drawn(monkeypatch, (80, 6), [f"s[{k}]" for k in range(20)])
    assert len(drawn) == 5  # the cursor waits on the sixth row
    assert [line.split()[1] for line in drawn[:3]] == ["s[0]", "s[1]", "s[2]"]
    assert drawn[3] == "  ... and 17 more running"
    assert "0 done, 20 running" in drawn[4]


def test_a_terminal_of_two_rows_shows_the_summary_alone(monkeypatch: Any) -> None:
    drawn = _drawn(monkeypatch, (80, 2), ["a", "b"])
    assert len(drawn) == 1 and "2 running" in drawn[0]


def test_the_width_is_the_terminal_s_own_not_an_exported_columns(monkeypatch: Any) -> None:
    """shutil.get_terminal_size() prefers $COLUMNS: COLUMNS=200 on a 40-column
    terminal drew lines of 199 columns that wrapped."""
    import fcntl
    import struct
    import termios

    monkeypatch.setenv("COLUMNS", "200")
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 10, 40, 0, 0))
    with os.fdopen(terminal, "w") as stream:
        assert progress._terminal_size(stream) == os.terminal_size((40, 10))
    os.close(controller)


def test_a_dumb_terminal_or_none_named_gets_plain_lines(monkeypatch: Any) -> None:
    """TERM=dumb (an Emacs shell) took cursor moves it shows as text."""
    from shinobi.render.progress import PlainProgress, make_progress

    controller, terminal = os.openpty()
    with os.fdopen(terminal, "w") as stream:
        for term in ("dumb", None):
            if term is None:
                monkeypatch.delenv("TERM", raising=False)
            else:
                monkeypatch.setenv("TERM", term)
            view = make_progress(1, stream)
            view.close()
            assert type(view) is PlainProgress, term
        monkeypatch.setenv("TERM", "xterm-256color")
        view = make_progress(1, stream)
        view.close()
        assert type(view) is LiveProgress
    os.close(controller)


def test_a_terminal_whose_size_was_never_set_is_taken_for_80_by_24() -> None:
    """A pty nobody sized says 0 columns and 0 rows (some CI runners, ``docker exec
    -t`` before a resize): the view drew empty lines for the whole run."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    try:
        fcntl.ioctl(leader, termios.TIOCSWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
        with os.fdopen(follower, "w", closefd=False) as stream:
            assert progress._terminal_size(stream) == os.terminal_size((80, 24))
        fcntl.ioctl(leader, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        with os.fdopen(follower, "w", closefd=False) as stream:
            assert progress._terminal_size(stream) == os.terminal_size((100, 30))
    finally:
        os.close(leader)
        os.close(follower)
