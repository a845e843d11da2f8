"""Starting a step: posix_spawn and Popen must give the step the same world."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from shinobi.backends import spawn
from shinobi.backends.base import RunControl
from shinobi.backends.process import _environment, run_process


@pytest.fixture(params=["posix_spawn", "popen"])
def way(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which way the step must start: the fast one needs ninja's own cwd and an owned process."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(spawn, "_owned", request.param == "posix_spawn")
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
    monkeypatch.setattr(spawn, "_owned", True)
    env = _environment(None)
    env[b"PATH"] = b"/nonexistent:" + env.get(b"PATH", b"/bin")
    assert not spawn._spawnable(str(tmp_path), env)
    assert spawn._spawnable(str(tmp_path), _environment(None))


@pytest.fixture
def inheritable_fd() -> Iterator[int]:
    read, write = os.pipe()
    os.set_inheritable(read, True)
    yield read
    for fd in (read, write):
        os.close(fd)


def test_a_library_users_inheritable_descriptor_means_popen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inheritable_fd: int
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(spawn, "_owned", False)
    assert inheritable_fd in spawn._inheritable_descriptors()
    assert not spawn._spawnable(str(tmp_path), _environment(None))
    assert os.get_inheritable(inheritable_fd)  # nothing of the user's was changed


def test_ninja_disowns_what_it_inherited(
    monkeypatch: pytest.MonkeyPatch, inheritable_fd: int
) -> None:
    monkeypatch.setattr(spawn, "_owned", False)
    spawn.disown_inherited()
    assert not os.get_inheritable(inheritable_fd) and spawn._owned


def test_the_step_sees_no_descriptor_but_its_three(
    tmp_path: Path, way: str, inheritable_fd: int
) -> None:
    if way == "posix_spawn":
        spawn.disown_inherited()  # what `ninja run` does first
    out = tmp_path / "fds"
    with open(out, "wb") as fh:
        child = _start(["/bin/ls", "/proc/self/fd"], _cwd(tmp_path, way), stdout=fh.fileno())
        assert child.wait() == 0
    fds = {int(n) for n in out.read_text().split()}
    assert len(fds - {0, 1, 2}) == 1  # ls's own listing of the directory


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
