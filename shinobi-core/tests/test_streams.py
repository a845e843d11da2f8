"""A step's output: pipes into log files that exist only once the step printed something."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from shinobi.backends import streams
from shinobi.backends.base import RunControl
from shinobi.backends.process import run_process


def logged(tmp_path: Path, script: str, control: RunControl | None = None) -> tuple[Path, Path]:
    out, err = tmp_path / "step.out", tmp_path / "step.err"
    run = run_process(
        ["/bin/sh", "-c", script],
        cwd=str(tmp_path),
        control=control or RunControl(),
        stdout_path=str(out),
        stderr_path=str(err),
    )
    assert run.returncode == 0, run.stderr
    return out, err


def test_a_silent_step_leaves_no_log_files(tmp_path: Path) -> None:
    out, err = logged(tmp_path, "true")
    assert not out.exists() and not err.exists()


def test_each_stream_gets_its_own_log_only_when_it_is_used(tmp_path: Path) -> None:
    out, err = logged(tmp_path, "echo only-err >&2")
    assert not out.exists() and err.read_text() == "only-err\n"


def test_output_larger_than_a_pipe_arrives_whole_and_in_order(tmp_path: Path) -> None:
    # 4 MB on stdout interleaved with stderr: a reader that served one pipe
    # only would deadlock the tool on the other's full buffer.
    script = (
        "i=0; while [ $i -lt 4000 ]; do head -c 1000 /dev/zero | tr '\\0' x; echo; "
        "echo e$i >&2; i=$((i+1)); done"
    )
    out, err = logged(tmp_path, script)
    lines = out.read_text().splitlines()
    assert len(lines) == 4000 and set(lines) == {"x" * 1000}
    assert err.read_text().splitlines() == [f"e{i}" for i in range(4000)]


def test_the_captured_text_is_the_tail_and_the_log_is_whole(tmp_path: Path) -> None:
    log = streams.StreamLog(str(tmp_path / "x.log"), warn=lambda m: None, limit=10)
    for i in range(100):
        log.write(f"{i:03d}\n".encode())
    log.close()
    everything = "".join(f"{i:03d}\n" for i in range(100))
    assert log.text() == everything[-10:]
    assert (tmp_path / "x.log").read_text().splitlines() == [f"{i:03d}" for i in range(100)]


def test_a_log_that_cannot_be_written_is_reported_and_kept_in_memory(tmp_path: Path) -> None:
    warnings: list[str] = []
    log = streams.StreamLog(str(tmp_path / "missing-dir" / "x.log"), warnings.append)
    log.write(b"still here\n")
    log.write(b"and here\n")
    log.close()
    assert log.text() == "still here\nand here\n"
    assert len(warnings) == 1 and "cannot write the logs in" in warnings[0]


def test_a_step_ends_with_its_leader_though_a_daemon_holds_its_output(tmp_path: Path) -> None:
    """A background process keeping stdout open must not keep the step running.

    What it prints after the step ended still reaches the step's log.
    """
    marker = tmp_path / "daemon.pid"
    go = tmp_path / "go"  # the daemon prints only once the test says so: no race with a timer
    script = (
        f"(while [ ! -e {go} ]; do sleep 0.05; done; echo late; sleep 30) &"
        f" echo $! > {marker}; echo early"
    )
    started = time.monotonic()
    try:
        out, _ = logged(tmp_path, script)
        assert time.monotonic() - started < 15  # not held for the daemon's 30 s
        assert out.read_text() == "early\n"
        go.touch()
        deadline = time.monotonic() + 10
        while out.read_text() != "early\nlate\n":
            assert time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
    finally:
        os.kill(int(marker.read_text()), signal.SIGKILL)


def test_a_program_that_cannot_start_says_why_in_its_log(tmp_path: Path) -> None:
    err = tmp_path / "step.err"
    run = run_process(
        [str(tmp_path / "no-such-tool")],
        cwd=str(tmp_path),
        control=RunControl(),
        stdout_path=str(tmp_path / "step.out"),
        stderr_path=str(err),
    )
    assert run.returncode == 127
    # a path was given: PATH plays no part, and the message does not send the user there
    assert "there is no such file (check the path)" in err.read_text()
    assert not (tmp_path / "step.out").exists()


def test_a_command_line_too_long_for_the_system_says_what_to_do(tmp_path: Path) -> None:
    """A step given thousands of inputs failed "Argument list too long", no fix named."""
    err = tmp_path / "step.err"
    run = run_process(
        ["echo", *(["x" * 1000] * 3000)],  # 3 MB of words: over any ARG_MAX here
        cwd=str(tmp_path),
        control=RunControl(),
        stdout_path=str(tmp_path / "step.out"),
        stderr_path=str(err),
    )
    assert run.returncode == 126
    said = err.read_text()
    assert "its command line is longer than this system takes (Argument list too long)" in said
    assert "group such inputs under one Directory input" in said


def test_without_a_pidfd_the_leader_is_polled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kernels before 5.3 have no pidfd_open: the step must still end with its leader."""
    monkeypatch.setattr(streams, "_pidfd", lambda pid: None)
    marker = tmp_path / "daemon.pid"
    started = time.monotonic()
    try:
        out, _ = logged(tmp_path, f"sleep 30 & echo $! > {marker}; echo done")
        assert time.monotonic() - started < 5.0
        assert out.read_text() == "done\n"
    finally:
        os.kill(int(marker.read_text()), signal.SIGKILL)


def open_pipes() -> set[str]:
    """The pipes this process holds (by inode), whatever their descriptor numbers."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if target.startswith("pipe:"):
            found.add(target)
    return found


def test_no_pipe_is_left_open_after_a_step(tmp_path: Path) -> None:
    before = open_pipes()
    logged(tmp_path, "echo hi; echo ho >&2")
    assert open_pipes() - before == set()


def test_a_step_sees_the_environment_as_it_is_when_the_step_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_TEST_LATE", "set after import")
    monkeypatch.delenv("HOME", raising=False)
    run = run_process(
        ["/bin/sh", "-c", 'echo "$SHINOBI_TEST_LATE|${HOME-unset}"'],
        cwd=str(tmp_path),
        control=RunControl(),
    )
    assert run.stdout == "set after import|unset\n"


def held(log: streams.StreamLog) -> int:
    return sum(map(len, log._chunks)) + len(log._last)


def test_the_tail_in_memory_stays_bounded_however_much_a_step_prints(tmp_path: Path) -> None:
    log = streams.StreamLog(None, warn=lambda m: None, limit=1000)
    chunk = b"0123456789" * 70_000  # 700 kB
    for _ in range(5):
        log.write(chunk)
        assert held(log) <= 1000 + streams._CHUNK
    log.write(b"the end\n")
    assert log.text().endswith("the end\n") and len(log.text()) == 1000


def test_a_large_tail_is_kept_in_chunks_not_moved_at_each_trim() -> None:
    """Every byte is copied into the tail once: a 16 MiB buffer shifted forward
    after every megabyte cost a step printing a gigabyte most of its time."""
    limit = 4 * streams._CHUNK
    log = streams.StreamLog(None, warn=lambda m: None, limit=limit)
    written = bytearray()
    for i in range(3000):  # small writes (a pystep's prints) and pipe-sized reads
        data = f"line {i}\n".encode() * (1 if i % 100 else 20_000)
        log.write(data)
        written += data
        assert limit <= held(log) <= limit + streams._CHUNK or held(log) == len(written)
    assert all(len(c) <= streams._CHUNK for c in log._chunks)
    assert log.text() == written[-limit:].decode()


@pytest.mark.parametrize("pidfd", [True, False])
def test_a_step_that_closes_its_streams_early_is_waited_for_and_leaks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pidfd: bool
) -> None:
    # With a pidfd, ninja holds the pipes' write ends until the leader exits
    # (one wake-up per step); the step closing its own must change nothing.
    if not pidfd:
        monkeypatch.setattr(streams, "_pidfd", lambda pid: None)
    before = open_pipes()
    started = time.monotonic()
    run = run_process(
        ["/bin/sh", "-c", "echo said; exec >&- 2>&-; sleep 0.3; exit 4"],
        cwd=str(tmp_path),
        control=RunControl(),
    )
    assert run.returncode == 4 and run.stdout == "said\n"
    assert time.monotonic() - started >= 0.3
    assert open_pipes() - before == set()


def test_output_written_just_before_the_leader_exits_is_kept(tmp_path: Path) -> None:
    for _ in range(20):  # the read after the exit must find what is still in the pipe
        run = run_process(
            ["/bin/sh", "-c", "printf 'last words'; printf 'and these' >&2"],
            cwd=str(tmp_path),
            control=RunControl(),
        )
        assert (run.stdout, run.stderr) == ("last words", "and these")


def test_a_step_that_cannot_be_started_for_a_bad_argument_leaves_no_pipe(
    tmp_path: Path,
) -> None:
    before = open_pipes()
    for _ in range(3):
        with pytest.raises(ValueError):
            run_process(["/bin/echo", "nul\0byte"], cwd=str(tmp_path), control=RunControl())
    assert open_pipes() - before == set()


def test_a_run_says_a_refused_log_folder_once(tmp_path: Path) -> None:
    """A full disk refused every step's logs, one warning each: 4,000 lines for a
    2,000-slice scatter, the first (the one that matters) scrolled away."""
    from shinobi.config import load_config
    from shinobi.session import Session

    session = Session(config=load_config(), cwd=str(tmp_path))
    for name in ("a", "b", "c"):
        log = streams.StreamLog(
            str(tmp_path / "no-such-folder" / f"{name}.out"), session.control.warn
        )
        log.write(b"printed\n")
    said = [w for w in session.warnings if w.startswith(streams.LOGS_REFUSED)]
    assert len(said) == 1, session.warnings
    assert f"{tmp_path / 'no-such-folder'} (No such file or directory)" in said[0]
