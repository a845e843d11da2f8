"""A step refuses to rewrite an output a live process is writing; readers get a warning.

The holders here are real processes the test starts, holding the output open
the way a leaked writer from an earlier run would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shinobi.backends.base import Invocation, PathUse
from shinobi.stale import LiveWriterError, OutputGuard, find_holders

HOLDER = """
import sys, time
mode, path, ready = sys.argv[1:4]
modes = {"write": "ab", "read": "rb", "rw": "r+b"}
fhs = [open(path, modes[m]) for m in mode.split("+")]  # "read+write": two descriptors, in order
open(ready, "w").close()
time.sleep(300)
"""

RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    out: Path

class Out(BaseModel):
    out: Path | None = None

write = Cab("write", ["/bin/sh", "-c", 'echo new > "$0"'], In, Out,
            {"out": ParamMeta(positional=True)})
pipe = Recipe("pipe", In)
pipe.add_step("write", write, out=pipe.inputs.out)
"""


@pytest.fixture
def hold(tmp_path: Path) -> Iterator[Callable[[str, Path], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    script = tmp_path / "holder.py"
    script.write_text(textwrap.dedent(HOLDER))

    def start(mode: str, path: Path) -> subprocess.Popen[bytes]:
        ready = tmp_path / f"ready-{len(started)}"
        proc = subprocess.Popen([sys.executable, str(script), mode, str(path), str(ready)])
        started.append(proc)
        deadline = time.monotonic() + 20
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "holder did not start"
            time.sleep(0.01)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def invocation(path: Path, role: str = "output", **extra: object) -> Invocation:
    return Invocation(
        step="write",
        argv=("true",),
        cwd=str(path.parent),
        paths=(PathUse(str(path), role, "out", **extra),),  # type: ignore[arg-type]
    )


def ninja(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("ninja")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "shinobi.cli"]
    return subprocess.run(
        [*command, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "SHINOBI_CONFIG": os.devnull,
            "SHINOBI_CACHE_DIR": str(tmp_path / "cache"),
        },
    )


def test_a_live_writer_refuses_the_step_and_the_output_is_left_intact(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    out = tmp_path / "product.txt"
    out.write_text("previous product\n")
    writer = hold("write", out)
    recipe = tmp_path / "recipe.py"
    recipe.write_text(textwrap.dedent(RECIPE))
    proc = ninja(tmp_path, "run", f"{recipe}:pipe", "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    assert f"pid {writer.pid}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert out.read_text() == "previous product\n"


def test_a_reader_gets_a_warning_and_the_step_runs(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    out = tmp_path / "product.txt"
    out.write_text("previous product\n")
    reader = hold("read", out)
    recipe = tmp_path / "recipe.py"
    recipe.write_text(textwrap.dedent(RECIPE))
    proc = ninja(tmp_path, "run", f"{recipe}:pipe", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "warning" in proc.stderr and f"pid {reader.pid}" in proc.stderr
    assert out.read_text() == "new\n"


def test_a_process_reading_an_output_and_writing_it_on_another_descriptor_refuses(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    """A tool that reads its product back while appending to it (a log, a table it
    updates) has a read descriptor first and a write one after. Were the first
    descriptor seen to decide, it would pass for a reader: a warning, and the step
    would go on to rewrite a file a live process is still writing."""
    out = tmp_path / "product.txt"
    out.write_text("previous product\n")
    holder = hold("read+write", out)
    warnings: list[str] = []
    with pytest.raises(LiveWriterError) as caught:
        OutputGuard(warnings.append).check(invocation(out))
    assert f"pid {holder.pid}" in str(caught.value)
    assert (holder.pid, True) in {(h.pid, h.writing) for h in find_holders([str(out)])}


def test_a_writer_inside_an_output_directory_counts(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    table = tmp_path / "table.ms"
    (table / "sub").mkdir(parents=True)
    (table / "sub" / "DATA").write_bytes(b"rows")
    writer = hold("rw", table / "sub" / "DATA")
    with pytest.raises(LiveWriterError) as caught:
        OutputGuard(lambda _m: None).check(invocation(table, kind="dir"))
    assert str(writer.pid) in str(caught.value)


def test_a_deleted_file_a_writer_holds_inside_an_output_directory_does_not_count(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    """What a live process writes into a file that was deleted reaches no path (a
    scratch file the tool unlinked, a lock removed while it runs on): the step's
    product cannot take in any of it. /proc names that file "... (deleted)" under
    the directory, and matched as a live writer it refused the step for nothing."""
    table = tmp_path / "table.ms"
    table.mkdir()
    scratch = table / "scratch.tmp"
    scratch.write_bytes(b"")
    hold("write", scratch)
    scratch.unlink()
    warnings: list[str] = []
    OutputGuard(warnings.append).check(invocation(table, kind="dir"))
    assert warnings == []


def test_an_input_rewritten_in_place_is_checked_too(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    data = tmp_path / "data.ms"
    data.write_text("x")
    hold("write", data)
    with pytest.raises(LiveWriterError):
        OutputGuard(lambda _m: None).check(invocation(data, role="input", mutable=True))
    OutputGuard(lambda _m: None).check(invocation(data, role="input"))  # a plain input is not


def test_an_output_that_does_not_exist_yet_needs_no_scan(tmp_path: Path) -> None:
    warnings: list[str] = []
    OutputGuard(warnings.append).check(invocation(tmp_path / "new.txt"))
    assert warnings == []


def test_a_holder_seen_in_a_shared_scan_is_confirmed_afresh(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    out = tmp_path / "product.txt"
    out.write_text("x")
    writer = hold("write", out)
    guard = OutputGuard(lambda _m: None, snapshot_age=3600)
    with pytest.raises(LiveWriterError):
        guard.check(invocation(out))
    writer.kill()
    writer.wait()
    guard.check(invocation(out))  # the same (old) scan, but the writer is gone now


SWAPPER = """
import os, sys
path, other = sys.argv[1:3]
held = open(path, "ab")
print("held", flush=True)
sys.stdin.readline()
os.dup2(os.open(other, os.O_WRONLY | os.O_CREAT), held.fileno())  # same number, other file
print("swapped", flush=True)
sys.stdin.readline()
"""


def test_a_descriptor_number_reused_for_another_file_since_the_scan_is_no_holder(
    tmp_path: Path,
) -> None:
    """A shared scan lists (pid, descriptor number); by the time a later step is
    checked, that number may name another file the process writes. Asking only
    whether the number is open for writing refused a step over a file the process
    had let go of."""
    out = tmp_path / "product.txt"
    out.write_text("x")
    command = [sys.executable, "-c", SWAPPER, str(out), str(tmp_path / "other.log")]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            assert proc.stdout.readline() == b"held\n"
            warnings: list[str] = []
            guard = OutputGuard(warnings.append, snapshot_age=3600)
            with pytest.raises(LiveWriterError):
                guard.check(invocation(out))  # the scan, shared by the check below
            proc.stdin.write(b"swap\n")
            proc.stdin.flush()
            assert proc.stdout.readline() == b"swapped\n"
            guard.check(invocation(out))
            assert warnings == []
        finally:
            proc.kill()


def test_find_holders_tells_writers_from_readers(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    out = tmp_path / "product.txt"
    out.write_text("x")
    reader = hold("read", out)
    writer = hold("write", out)
    found = {(h.pid, h.writing) for h in find_holders([str(out)])}
    assert found == {(reader.pid, False), (writer.pid, True)}


def test_a_symlinked_output_is_matched_by_its_target(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "out.txt").write_text("x")
    (tmp_path / "link").symlink_to(real)
    hold("write", real / "out.txt")
    with pytest.raises(LiveWriterError):
        OutputGuard(lambda _m: None).check(invocation(tmp_path / "link" / "out.txt"))


def test_a_device_or_a_link_to_one_is_no_product_to_guard(
    tmp_path: Path, hold: Callable[[str, Path], subprocess.Popen[bytes]]
) -> None:
    """Every host has processes writing /dev/null: a log sent there is not refused."""
    hold("write", Path(os.devnull))
    (tmp_path / "log.txt").symlink_to(os.devnull)
    warnings: list[str] = []
    OutputGuard(warnings.append).check(invocation(Path(os.devnull)))
    OutputGuard(warnings.append).check(invocation(tmp_path / "log.txt"))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    OutputGuard(warnings.append).check(invocation(fifo))
    assert warnings == []


def test_a_holders_command_line_is_said_on_one_line() -> None:
    """A ``python -c`` reader's program broke the warning naming it over lines."""
    from shinobi.stale import command_of

    whole = f"{sys.executable} -c import time time.sleep(60)"

    def one_line(said: str) -> bool:  # whole, or cut at 60 characters and marked so
        return said == whole or (said.endswith("...") and whole.startswith(said[:-3]))

    proc = subprocess.Popen([sys.executable, "-c", "import time\ntime.sleep(60)"])
    try:
        deadline = time.monotonic() + 20
        while not one_line(said := command_of(proc.pid)):  # "?" until it has exec'd
            assert time.monotonic() < deadline, said
            time.sleep(0.01)
        assert "\n" not in said
    finally:
        proc.kill()
        proc.wait()
