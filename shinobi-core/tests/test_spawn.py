"""Starting a step: posix_spawn and Popen must give the step the same world."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from shinobi.backends import spawn
from shinobi.backends.base import RunControl
from shinobi.backends.process import _environment, run_process


@pytest.fixture(params=["posix_spawn", "popen"])
def way(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which way the step must start: the fast one needs the step in ninja's own cwd."""
    monkeypatch.chdir(tmp_path)
    if request.param == "popen":  # a directory other than ninja's own forces Popen
        (tmp_path / "elsewhere").mkdir()
    return str(request.param)


def _cwd(tmp_path: Path, way: str) -> str:
    return os.getcwd() if way == "posix_spawn" else str(tmp_path / "elsewhere")


def _start(argv: list[str], cwd: str, **streams: int) -> spawn.Child:
    null = os.open(os.devnull, os.O_RDWR)
    try:
        io = {"stdin": null, "stdout": null, "stderr": null, **streams}
        return spawn.start(argv, cwd=cwd, env=_environment(None), **io)
    finally:
        os.close(null)


def test_the_way_taken_is_the_one_the_conditions_allow(tmp_path: Path, way: str) -> None:
    child = _start(["/bin/true"], _cwd(tmp_path, way))
    assert child.wait() == 0
    assert isinstance(child, subprocess.Popen) == (way == "popen")


def test_another_path_means_popen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = _environment(None)
    env[b"PATH"] = b"/nonexistent:" + env.get(b"PATH", b"/bin")
    assert not spawn._spawnable(os.getcwd(), env)
    assert spawn._spawnable(os.getcwd(), _environment(None))


def test_while_user_code_runs_in_process_steps_get_popen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another thread's pystep could open an inheritable descriptor between
    # the listing and the spawn; only Popen closes it whenever it was opened.
    monkeypatch.chdir(tmp_path)
    with spawn.user_code():
        child = _start(["/bin/true"], os.getcwd())
    assert isinstance(child, subprocess.Popen) and child.wait() == 0
    assert not isinstance(_start(["/bin/true"], os.getcwd()), subprocess.Popen)


def test_a_deleted_working_directory_falls_back_to_popen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    out = tmp_path / "out"
    with open(out, "wb") as fh:
        child = _start(["/bin/echo", "hi"], str(tmp_path), stdout=fh.fileno())
        assert child.wait() == 0
    assert out.read_text() == "hi\n"


@pytest.fixture
def inheritable_fd() -> Iterator[int]:
    read, write = os.pipe()
    os.set_inheritable(read, True)
    yield read
    for fd in (read, write):
        os.close(fd)


def test_the_step_sees_no_descriptor_but_its_three(
    tmp_path: Path, way: str, inheritable_fd: int
) -> None:
    out = tmp_path / "fds"
    with open(out, "wb") as fh:
        child = _start(["/bin/ls", "/proc/self/fd"], _cwd(tmp_path, way), stdout=fh.fileno())
        assert child.wait() == 0
    fds = {int(n) for n in out.read_text().split()}
    assert len(fds - {0, 1, 2}) == 1  # ls's own listing of the directory
    assert os.get_inheritable(inheritable_fd)  # and ninja's process is left as it was


def _descriptors_seen(tmp_path: Path) -> set[int]:
    """The descriptors a step started by posix_spawn in ninja's directory has, but its three."""
    out = tmp_path / "fds"
    with open(out, "wb") as fh:
        child = _start(["/bin/ls", "/proc/self/fd"], os.getcwd(), stdout=fh.fileno())
        assert not isinstance(child, subprocess.Popen)
        assert child.wait() == 0
    return {int(n) for n in out.read_text().split()} - {0, 1, 2}


@contextlib.contextmanager
def _inheritable_pipe() -> Iterator[int]:
    """The read end of a pipe, made inheritable (as code of the user's might)."""
    read, write = os.pipe()
    os.set_inheritable(read, True)
    try:
        yield read
    finally:
        for fd in (read, write):
            with contextlib.suppress(OSError):  # a test may have closed it already
                os.close(fd)


def test_a_run_keeps_its_listing_but_checks_what_it_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with spawn.ninja_holds_main():
        with _inheritable_pipe() as read:
            assert read not in _descriptors_seen(tmp_path)  # listed, and closed in the step
            assert read in (spawn._listed or [])
            os.close(read)  # gone since the listing: the step still starts
            assert len(_descriptors_seen(tmp_path)) == 1  # only ls's own listing
            assert read not in (spawn._listed or [])
        with _inheritable_pipe() as reused:  # may reuse the number, no longer listed
            with spawn.user_code():  # code of the user's ran: listed afresh
                pass
            assert reused not in _descriptors_seen(tmp_path)
            assert reused in (spawn._listed or [])


def test_a_new_run_lists_the_descriptors_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with spawn.ninja_holds_main():
        _descriptors_seen(tmp_path)
    with _inheritable_pipe() as read:  # the caller's code between two runs
        with spawn.ninja_holds_main():
            assert read not in _descriptors_seen(tmp_path)
        assert read not in _descriptors_seen(tmp_path)  # outside a run: every spawn lists


def test_a_thread_not_ninjas_makes_the_next_spawn_list_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with spawn.ninja_holds_main():
        _descriptors_seen(tmp_path)
        stop = threading.Event()
        foreign = threading.Thread(target=stop.wait, name="left-behind")
        foreign.start()
        with _inheritable_pipe() as read:  # as such a thread might, while it ran
            assert isinstance(_start(["/bin/true"], os.getcwd()), subprocess.Popen)
            stop.set()
            foreign.join()
            assert read not in _descriptors_seen(tmp_path)


def test_exit_codes_and_signals_read_alike(tmp_path: Path, way: str) -> None:
    cwd = _cwd(tmp_path, way)
    assert _start(["/bin/sh", "-c", "exit 3"], cwd).wait() == 3
    killed = _start(["/bin/sh", "-c", "kill -9 $$"], cwd)
    assert killed.wait() == -signal.SIGKILL
    assert killed.poll() == -signal.SIGKILL


def test_poll_sees_a_running_child_then_its_end(tmp_path: Path, way: str) -> None:
    child = _start(["/bin/sleep", "0.2"], _cwd(tmp_path, way))
    assert child.poll() is None
    assert child.wait() == 0 and child.poll() == 0


def test_the_step_leads_a_session_of_its_own(tmp_path: Path, way: str) -> None:
    out = tmp_path / "sid"
    with open(out, "wb") as fh:
        child = _start(
            ["/bin/sh", "-c", "ps -o sid= -p $$"], _cwd(tmp_path, way), stdout=fh.fileno()
        )
        child.wait()
    assert int(out.read_text()) == child.pid


def test_sigpipe_is_back_to_its_default_in_the_step(tmp_path: Path, way: str) -> None:
    # Python ignores SIGPIPE for itself; a step inheriting that would have
    # `yes` print "Broken pipe" forever instead of ending when `head` is done.
    err = tmp_path / "err"
    with open(err, "wb") as fh:
        child = _start(
            ["/bin/sh", "-c", "yes | head -n 1"], _cwd(tmp_path, way), stderr=fh.fileno()
        )
        assert child.wait() == 0
    assert err.read_text() == ""


def test_a_program_not_found_raises_as_popen_does(tmp_path: Path, way: str) -> None:
    with pytest.raises(FileNotFoundError):
        _start(["no-such-program-anywhere"], _cwd(tmp_path, way))


def test_a_script_without_an_interpreter_line_is_refused(tmp_path: Path, way: str) -> None:
    script = tmp_path / "script"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    with pytest.raises(OSError) as raised:
        _start([str(script)], _cwd(tmp_path, way))
    assert not isinstance(raised.value, FileNotFoundError | PermissionError)


def test_a_whole_step_runs_the_same_either_way(tmp_path: Path, way: str) -> None:
    out = tmp_path / "step.out"
    run = run_process(
        ["sh", "-c", "echo $SHINOBI_TEST_VALUE; pwd"],
        cwd=_cwd(tmp_path, way),
        control=RunControl(),
        env={**os.environ, "SHINOBI_TEST_VALUE": "seen"},
        stdout_path=str(out),
    )
    assert run.returncode == 0
    assert out.read_text().splitlines() == ["seen", os.path.realpath(_cwd(tmp_path, way))]


def test_a_watcher_is_told_the_pid_of_the_process_it_watches(tmp_path: Path, way: str) -> None:
    """Told while the step runs: a watchdog beside it needs the pid before it ends."""
    out, told = tmp_path / "step.out", []
    gate = tmp_path / "gate"

    def started(pid: int) -> None:
        told.append(pid)
        gate.touch()

    run = run_process(
        ["sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.01; done; echo $$"],
        cwd=_cwd(tmp_path, way),
        control=RunControl(),
        stdout_path=str(out),
        started=started,
    )
    assert run.returncode == 0
    assert told == [int(out.read_text())]


def _in_thread(name: str, cwd: str) -> spawn.Child:
    started: list[spawn.Child] = []
    thread = threading.Thread(target=lambda: started.append(_start(["/bin/true"], cwd)), name=name)
    thread.start()
    thread.join()
    started[0].wait()
    return started[0]


def test_a_thread_that_is_not_ninjas_means_popen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thread a pystep left running could open an inheritable descriptor
    # between the listing and the spawn.
    monkeypatch.chdir(tmp_path)
    stop = threading.Event()
    foreign = threading.Thread(target=stop.wait, name="left-behind")
    foreign.start()
    try:
        assert isinstance(_start(["/bin/true"], os.getcwd()), subprocess.Popen)
    finally:
        stop.set()
        foreign.join()
    assert not isinstance(_start(["/bin/true"], os.getcwd()), subprocess.Popen)


def test_the_main_thread_counts_as_ninjas_only_while_a_run_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert isinstance(_in_thread("shinobi-worker-test", os.getcwd()), subprocess.Popen)
    with spawn.ninja_holds_main():
        assert not isinstance(_in_thread("shinobi-worker-test", os.getcwd()), subprocess.Popen)


def test_user_code_cannot_begin_while_a_spawn_is_under_way() -> None:
    entered = threading.Event()

    def user() -> None:
        with spawn.user_code():
            entered.set()

    with spawn._lock:  # what a spawn holds from its checks to the spawn itself
        thread = threading.Thread(target=user)
        thread.start()
        assert not entered.wait(0.2)
    thread.join(5)
    assert entered.is_set() and spawn._users.value == 0


def test_an_inherited_descriptor_above_the_soft_limit_is_closed_by_popen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``exec 300>log; ulimit -n 256; ninja run ...``: glibc's posix_spawn refuses to
    close a descriptor at or above the soft limit (EBADF), and every step failed
    "cannot run: Bad file descriptor"."""
    import resource

    monkeypatch.chdir(tmp_path)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    high = 300
    with _inheritable_pipe() as read:
        os.dup2(read, high)  # inheritable, as a shell's exec leaves it
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
            out = tmp_path / "fds"
            with open(out, "wb") as fh:
                child = _start(["/bin/ls", "/proc/self/fd"], os.getcwd(), stdout=fh.fileno())
                assert child.wait() == 0
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
            os.close(high)
    assert isinstance(child, subprocess.Popen)
    assert high not in {int(n) for n in out.read_text().split()}
