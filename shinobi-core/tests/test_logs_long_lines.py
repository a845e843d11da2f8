"""``ninja logs --follow`` of several logs: a line longer than the 1 MiB read at a
time came out cut into pieces, each titled and ended as a line of its own, and
another log's lines could come between them (a tool printing one huge JSON line,
a progress bar that never breaks a line)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_logs_stream import MB, RUN, _finished_run, _printed

from shinobi.cli import log_copy, logs


def _followed_while(
    monkeypatch: pytest.MonkeyPatch, run_dir: Path, rounds: list[Callable[[Path], None]]
) -> None:
    """Make the run in ``run_dir`` look running while ``ninja logs --follow`` reads it, and
    each of its pauses between two rounds do the next of ``rounds`` to its logs folder (the
    step writing more); the run ends once they are done."""
    from shinobi import local_runs

    left = list(rounds)
    monkeypatch.setattr(local_runs, "is_running", lambda path: bool(left))

    def pause(seconds: float) -> None:
        left.pop(0)(run_dir / "logs")

    monkeypatch.setattr(logs.time, "sleep", pause)


def _append(name: str, data: bytes) -> Callable[[Path], None]:
    """A round of a step writing ``data`` to its log ``name``."""

    def write(folder: Path) -> None:
        with (folder / name).open("ab") as fh:
            fh.write(data)

    return write


def test_a_3_mib_line_is_one_titled_line_when_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Followed, the 3 MiB line came out as 3 lines of 1 MiB, each titled."""
    line = b"{" + b'"k": 1, ' * (3 * MB // 8) + b"}"
    out = b"before\n" + line + b"\nafter\n"
    _finished_run(tmp_path, {"s.out": out, "s.err": b"warn\n"})
    code, followed = _printed(tmp_path / "f", "logs", RUN, "s", "-f", "--workdir", str(tmp_path))
    assert code == 0
    assert followed.split(b"\n") == [
        b"[s stdout] before",
        b"[s stdout] " + line,
        b"[s stdout] after",
        b"[s stderr] warn",
        b"",
    ]
    # without --follow the log is copied as it is, under its title, the long line whole
    code, plain = _printed(tmp_path / "p", "logs", RUN, "s", "--workdir", str(tmp_path))
    assert code == 0
    assert plain == b"==> s stdout <==\n" + out + b"==> s stderr <==\nwarn\n"


def test_another_logs_lines_wait_until_a_long_line_has_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step writes 1 MiB and more of one line, and its stderr a line, while the run is
    followed; the line ends a round later: the stderr lines came between its pieces."""
    start = b"x" * (MB + 10)
    run_dir = _finished_run(tmp_path, {"s.out": start, "s.err": b"e1\n"})
    _followed_while(
        monkeypatch,
        run_dir,
        [_append("s.out", b"y" * 100), _append("s.err", b"e2\n"), _append("s.out", b"z\nnext\n")],
    )
    code, followed = _printed(tmp_path / "f", "logs", RUN, "s", "-f", "--workdir", str(tmp_path))
    assert code == 0
    assert followed.split(b"\n") == [
        b"[s stdout] " + start + b"y" * 100 + b"z",
        b"[s stdout] next",
        b"[s stderr] e1",
        b"[s stderr] e2",
        b"",
    ]


def test_a_line_that_goes_on_and_on_is_cut_with_a_mark_when_others_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line that never ends keeps the other logs waiting only so long
    (:data:`log_copy.LINE_BOUND` of it printed, here made small): then it is cut, marked as
    such, the other logs' lines are printed, and its rest comes marked as resumed."""
    monkeypatch.setattr(log_copy, "CHUNK", 64)
    monkeypatch.setattr(log_copy, "LINE_BOUND", 300)
    run_dir = _finished_run(tmp_path, {"s.out": b"p" * 100, "s.err": b"e1\n"})
    _followed_while(monkeypatch, run_dir, [_append("s.out", b"p" * 100)] * 4)
    code, followed = _printed(tmp_path / "f", "logs", RUN, "s", "-f", "--workdir", str(tmp_path))
    assert code == 0
    assert followed.split(b"\n") == [
        b"[s stdout] " + b"p" * 300 + log_copy.CUT_MARK,
        b"[s stderr] e1",
        b"[s stdout] " + log_copy.RESUMED_MARK + b"p" * 200,
        b"",
    ]


def test_a_long_line_alone_is_never_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing else waiting, a line longer than the bound stays whole."""
    monkeypatch.setattr(log_copy, "CHUNK", 64)
    monkeypatch.setattr(log_copy, "LINE_BOUND", 150)
    run_dir = _finished_run(tmp_path, {"s.out": b"p" * 100})
    _followed_while(
        monkeypatch, run_dir, [_append("s.out", b"p" * 100)] * 3 + [_append("s.out", b"\n")]
    )
    code, followed = _printed(tmp_path / "f", "logs", RUN, "s", "-f", "--workdir", str(tmp_path))
    assert code == 0
    assert followed == b"[s stdout] " + b"p" * 400 + b"\n"


def test_a_long_line_followed_takes_little_memory(tmp_path: Path) -> None:
    """A 40 MiB line (and a log beside it) followed: printed whole, in pieces, with a
    few MB at most held (the line is not gathered to be printed at once)."""
    import tracemalloc

    run_dir = _finished_run(tmp_path, {"s.err": b"e\n", "t.out": b"x\n"})
    with (run_dir / "logs" / "s.out").open("wb") as fh:
        for _ in range(40):
            fh.write(b"j" * MB)
        fh.write(b"\n")
    args = ["logs", RUN, "s", "-f", "--workdir", str(tmp_path)]
    assert _printed(tmp_path / "warm", "logs", RUN, "t", *args[3:])[0] == 0  # imports done
    tracemalloc.start()
    try:
        code, _ = _printed(tmp_path / "f", *args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0
    assert peak < 8 * MB, f"ninja logs allocated {peak // MB} MB for a 40 MB line"
    with (tmp_path / "f").open("rb") as fh:
        assert fh.read(12) == b"[s stdout] j"
        fh.seek(-len(b"j\n[s stderr] e\n"), 2)
        assert fh.read() == b"j\n[s stderr] e\n"
    assert (tmp_path / "f").stat().st_size == len(b"[s stdout] \n[s stderr] e\n") + 40 * MB


def test_a_progress_bar_without_line_breaks_is_shown_a_round_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line not ended waited for its line break until the run ended (hours, for an
    imager's ``\\r`` progress bar); now what has come of it is printed, titled, once it
    has waited a round, and its rest comes as a line of its own."""
    run_dir = _finished_run(tmp_path, {"s.out": b"tick 0\n", "s.err": b"\rimaging: 8%"})
    _followed_while(
        monkeypatch,
        run_dir,
        [
            _append("s.err", b"\rimaging: 16%"),
            _append("s.out", b"tick 1\n"),
            _append("s.err", b"\rimaging: 24%\n"),
            _append("s.out", b"tick 2\n"),
        ],
    )
    code, followed = _printed(tmp_path / "f", "logs", RUN, "s", "-f", "--workdir", str(tmp_path))
    assert code == 0
    assert followed.split(b"\n") == [
        b"[s stdout] tick 0",
        b"[s stderr] \rimaging: 8%\rimaging: 16%",
        b"[s stdout] tick 1",
        b"[s stderr] \rimaging: 24%",
        b"[s stdout] tick 2",
        b"",
    ]


def test_a_last_line_without_a_line_break_is_shown_before_the_run_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finished step's last line, not ended, is printed once a round has brought
    nothing more of it, not when the whole run ends."""
    run_dir = _finished_run(tmp_path, {"s.out": b"no newline at end", "s.err": b"e1\n"})
    _followed_while(monkeypatch, run_dir, [_append("s.err", b"e2\n"), _append("s.err", b"e3\n")])
    code, followed = _printed(tmp_path / "f", "logs", RUN, "s", "-f", "--workdir", str(tmp_path))
    assert code == 0
    assert followed.split(b"\n") == [
        b"[s stderr] e1",
        b"[s stdout] no newline at end",
        b"[s stderr] e2",
        b"[s stderr] e3",
        b"",
    ]
