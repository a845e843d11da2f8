"""``ninja logs``: a big log is copied in chunks, not read whole (a 600 MB log took
600 MB of memory, and ``--follow`` of a finished run printed 55k lines a second
while growing to GBs)."""

from __future__ import annotations

import io
import json
import sys
import tracemalloc
from pathlib import Path

import pytest

from shinobi.cli.main import main

RUN = "20270101-000000-aaaaaa"
MB = 1 << 20


def _finished_run(root: Path, logs: dict[str, bytes | int]) -> Path:
    """A finished run folder under ``root`` holding ``logs`` (file name: bytes, or a
    size in MB of lines of 1000 bytes, written a block at a time)."""
    run_dir = root / ".shinobi" / "runs" / RUN
    (run_dir / "logs").mkdir(parents=True)
    steps = sorted({name.rsplit(".", 1)[0] for name in logs})
    manifest = {
        "format": 1,
        "run_id": RUN,
        "status": "ok",
        "recipe": {"name": "r"},
        "steps": [{"name": s, "status": "ok", "logs": {}, "details": {}} for s in steps],
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    (run_dir / ".running").write_text('{"recipe": "r", "pid": 1, "ended": true, "status": "ok"}')
    block = (b"x" * 999 + b"\n") * (MB // 1000)
    for name, content in logs.items():
        with (run_dir / "logs" / name).open("wb") as fh:
            if isinstance(content, bytes):
                fh.write(content)
            else:
                for _ in range(content):
                    fh.write(block)
    return run_dir


def _printed(out: Path, *args: str) -> tuple[int, bytes]:
    """``ninja ARGS`` in this process, its stdout written to the file ``out`` (not held in
    memory, so that what is measured is ninja's own): (exit status, what it printed)."""
    saved = sys.stdout
    with out.open("wb") as raw:
        sys.stdout = stdout = io.TextIOWrapper(raw, encoding="utf-8")
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        finally:
            stdout.flush()
            sys.stdout = saved
    return code, out.read_bytes() if out.stat().st_size < 8 * MB else b""


@pytest.mark.parametrize("follow", [False, True])
def test_a_big_log_is_copied_in_chunks_with_little_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, follow: bool
) -> None:
    """50 MB of log (both streams of a step, so --follow titles each line): the peak of
    what ninja allocates stays a few MB, where it held the whole log (and, followed,
    a list of its lines too)."""
    _finished_run(tmp_path, {"big.out": 40, "big.err": 10, "small.out": b"x\n"})
    args = ["logs", RUN, "big", "--workdir", str(tmp_path)] + (["--follow"] if follow else [])
    assert _printed(tmp_path / "warm", "logs", RUN, "small", *args[3:])[0] == 0  # imports done
    tracemalloc.start()
    try:
        code, _ = _printed(tmp_path / "printed", *args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0
    assert peak < 8 * MB, f"ninja logs allocated {peak // MB} MB for a 50 MB log"
    lines = 50 * (MB // 1000)
    header = 2 * (len("==> big stdout <==\n"))
    titles = lines * len("[big stdout] ")  # as long as "[big stderr] "
    expected = lines * 1000 + (titles if follow else header)
    assert (tmp_path / "printed").stat().st_size == expected


def test_the_bytes_and_lines_come_out_as_they_were_across_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines cut between two chunks are printed whole, each titled, non-UTF-8 bytes as
    they are; a line longer than a chunk comes whole, titled once (test_logs_long_lines);
    the last line, not ended, is ended."""
    from shinobi.cli import log_copy

    monkeypatch.setattr(log_copy, "CHUNK", 64)
    out = b"".join(b"line %d caf\xe9\n" % i for i in range(40)) + b"L" * 100 + b"\nend"
    _finished_run(tmp_path, {"s.out": out, "s.err": b"warn\xff"})
    monkeypatch.chdir(tmp_path)
    code, plain = _printed(tmp_path / "p", "logs", RUN, "s", "--stream", "stdout")
    assert code == 0 and plain == out
    code, both = _printed(tmp_path / "b", "logs", RUN, "s")
    assert code == 0
    assert both == b"==> s stdout <==\n" + out + b"\n==> s stderr <==\nwarn\xff\n"
    code, followed = _printed(tmp_path / "f", "logs", RUN, "s", "-f")
    assert code == 0
    lines = followed.split(b"\n")
    assert lines[:40] == [b"[s stdout] line %d caf\xe9" % i for i in range(40)]
    assert lines[-3:] == [b"[s stdout] end", b"[s stderr] warn\xff", b""]
    assert lines[40:-3] == [b"[s stdout] " + b"L" * 100]  # in pieces, under one title
