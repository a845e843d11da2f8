"""Teardown of one step: the whole process family goes before the step is reported.

These run ``run_process`` for real on a family that includes a child in its
own process group, a ``setsid()`` daemon and a child that ignores SIGTERM. A
process that will not die cannot be made on purpose, so that path uses a
:class:`ProcessTable` that reports a live ``sleep`` as a member and never
signals it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_doubles import UndyingTable

from shinobi import teardown
from shinobi.backends.base import BackendRun, RunControl
from shinobi.backends.process import run_process

FAMILY = Path(__file__).with_name("test_teardown_family.py")
ROLES = ("root", "group", "daemon", "clean", "stubborn")


def tagged(tag: str) -> list[int]:
    """Live pids whose command line carries ``tag``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def wait_for(paths: list[Path], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, (
            f"never appeared: {[p for p in paths if not p.exists()]}"
        )
        time.sleep(0.02)


@pytest.fixture
def tag() -> Iterator[str]:
    value = f"shinobi-teardown-{uuid.uuid4().hex}"
    yield value
    for pid in tagged(value):  # never leave a family behind, even when a test fails
        os.kill(pid, signal.SIGKILL)


def start_family(
    tmp_path: Path, tag: str, control: RunControl, alive_at_return: list[list[int]] | None = None
) -> tuple[threading.Thread, list[BackendRun]]:
    """Run the family on a worker thread; ``alive_at_return`` gets who lived when it returned."""
    markers = tmp_path / "family"
    argv = [sys.executable, str(FAMILY), "root", tag, str(markers)]
    outcome: list[BackendRun] = []

    def run() -> None:
        outcome.append(run_process(argv, cwd=str(tmp_path), control=control))
        if alive_at_return is not None:
            alive_at_return.append(tagged(tag))

    thread = threading.Thread(target=run)
    thread.start()
    wait_for([Path(f"{markers}.{role}") for role in ROLES])
    return thread, outcome


def test_every_member_of_the_family_is_gone_when_cancel_returns(tmp_path: Path, tag: str) -> None:
    control = RunControl(grace=0.5)
    thread, outcome = start_family(tmp_path, tag, control)
    assert len(tagged(tag)) == len(ROLES)
    survivors = control.cancel()
    assert survivors == ()
    assert tagged(tag) == []  # confirmed gone before cancel() returned, daemon included
    thread.join(10)
    assert outcome and outcome[0].cancelled and outcome[0].undying == ()


def test_the_step_is_reported_only_after_its_processes_are_gone(tmp_path: Path, tag: str) -> None:
    alive_at_return: list[list[int]] = []
    control = RunControl(grace=0.5)
    thread, _ = start_family(tmp_path, tag, control, alive_at_return)
    # The leader dies at the first SIGTERM while the stubborn child lives on
    # until SIGKILL: the worker thread must not report the step in between.
    control.cancel()
    thread.join(10)
    assert alive_at_return == [[]]


@pytest.fixture
def ghost() -> Iterator[int]:
    proc = subprocess.Popen(["sleep", "300"])
    yield proc.pid
    proc.kill()
    proc.wait()


def test_a_process_that_will_not_die_is_named(
    tmp_path: Path, tag: str, ghost: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(teardown, "KILL_WAIT", 0.5)
    control = RunControl(grace=0.2)
    with teardown.use_process_table(UndyingTable(ghost)):
        thread, outcome = start_family(tmp_path, tag, control)
        survivors = control.cancel()
        thread.join(15)
    assert survivors == (ghost,)
    assert outcome[0].undying == (ghost,)
    assert tagged(tag) == []  # the killable members are still killed


def test_a_workspace_is_kept_while_a_process_may_still_write_into_it(tmp_path: Path) -> None:
    kept = teardown.StepWorkspace(str(tmp_path))
    kept.close(undying=(4242,))
    assert kept.kept and Path(kept.path).is_dir()
    gone = teardown.StepWorkspace(str(tmp_path))
    gone.close()
    assert not Path(gone.path).exists()


def test_terminate_reports_survivors_after_kill_wait_and_keeps_signalling() -> None:
    sent: list[tuple[int, int]] = []

    class Fake(teardown.ProcessTable):
        def send(self, pid: int, sig: int) -> None:
            sent.append((pid, sig))

    left = teardown.terminate(lambda: [4242], grace=0.05, kill_wait=0.1, table=Fake())
    assert left == (4242,)
    assert sent[:2] == [(4242, signal.SIGTERM), (4242, signal.SIGCONT)]
    kills = [s for s in sent if s[1] == signal.SIGKILL]
    assert len(kills) >= 2  # repeated until kill_wait runs out


def test_a_process_born_after_the_first_look_gets_its_sigterm_too() -> None:
    # A shell that forks its tool just as the teardown looks: the tool was not
    # there to be signalled, and must not be left to run out the grace period.
    sent: list[tuple[int, int]] = []
    looks = iter([[100], [101], [101], []])

    class Fake(teardown.ProcessTable):
        def send(self, pid: int, sig: int) -> None:
            sent.append((pid, sig))

    left = teardown.terminate(lambda: next(looks), grace=5, table=Fake())
    assert left == ()
    assert (101, signal.SIGTERM) in sent
    assert sent.count((101, signal.SIGTERM)) == 1  # once: a second may cut its clean-up short
    assert not [s for s in sent if s[1] == signal.SIGKILL]


def test_a_process_born_during_the_grace_period_is_asked_to_stop_too(tmp_path: Path) -> None:
    # The leader ignores SIGTERM and forks a worker after the teardown's first
    # look; unasked, the worker would run until the SIGKILL ends the grace.
    control = RunControl(grace=3)
    marker = tmp_path / "worked"
    script = f"trap '' TERM; sleep 0.3; (trap - TERM; sleep 1; touch {marker}) & wait"
    run = run_process(
        ["/bin/sh", "-c", script],
        cwd=str(tmp_path),
        control=control,
        started=lambda pid: control.cancel(),
    )
    assert run.cancelled
    assert not marker.exists()


def test_terminate_of_nothing_signals_nothing() -> None:
    sent: list[tuple[int, int]] = []

    class Fake(teardown.ProcessTable):
        def send(self, pid: int, sig: int) -> None:
            sent.append((pid, sig))

    assert teardown.terminate(lambda: [], grace=5, table=Fake()) == ()
    assert sent == []


def test_without_log_paths_the_output_is_still_captured(tmp_path: Path) -> None:
    run = run_process(
        ["sh", "-c", "echo out; echo err >&2"], cwd=str(tmp_path), control=RunControl()
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, "out\n", "err\n")


def test_every_step_process_carries_the_teardown_tag(tmp_path: Path) -> None:
    run = run_process(
        ["sh", "-c", f'echo "${teardown.TAG_VARIABLE}"'],
        cwd=str(tmp_path),
        control=RunControl(),
        stdout_path=str(tmp_path / "o"),
        stderr_path=str(tmp_path / "e"),
    )
    assert run.stdout.startswith(teardown.run_prefix())


def test_a_cancel_before_start_spawns_nothing(tmp_path: Path) -> None:
    control = RunControl()
    control.cancel()
    marker = tmp_path / "ran"
    run = run_process(["touch", str(marker)], cwd=str(tmp_path), control=control)
    assert run.cancelled and not marker.exists()


def test_a_failing_payload_stopper_is_reported_and_the_processes_still_go(
    tmp_path: Path, tag: str
) -> None:
    heard: list[str] = []
    control = RunControl(grace=0.3)
    control.on_warning = heard.append
    marker = tmp_path / "up"
    outcome: list[BackendRun] = []

    def broken_stopper() -> None:
        raise RuntimeError("engine unreachable")

    argv = ["sh", "-c", f"touch {marker}; sleep 300; : {tag}"]
    thread = threading.Thread(
        target=lambda: outcome.append(
            run_process(argv, cwd=str(tmp_path), control=control, before_kill=broken_stopper)
        )
    )
    thread.start()
    wait_for([marker])
    assert control.cancel() == ()
    thread.join(10)
    assert outcome[0].cancelled and tagged(tag) == []
    assert heard and "engine unreachable" in heard[0]


def test_a_step_whose_leader_is_killed_has_its_family_stopped_before_it_is_reported(
    tmp_path: Path, tag: str
) -> None:
    """The out-of-memory killer takes the main process alone: what it started must
    not write on after the step failed (only a child that left the session,
    cleared its environment and is orphaned escapes, as at an interrupt)."""
    alive_at_return: list[list[int]] = []
    control = RunControl(grace=0.3)
    thread, outcome = start_family(tmp_path, tag, control, alive_at_return)
    markers = tmp_path / "family"
    root, clean = (int(Path(f"{markers}.{role}").read_text()) for role in ("root", "clean"))
    os.kill(root, signal.SIGKILL)
    thread.join(15)
    run = outcome[0]
    assert run.signal == signal.SIGKILL and not run.cancelled
    assert alive_at_return == [[clean]]  # the stubborn one included: SIGKILL after the grace
    assert run.stopped and all(name.startswith("pid ") for name in run.stopped)


def test_a_failed_steps_leftover_that_will_not_die_is_named_and_keeps_the_live_marker(
    tmp_path: Path, ghost: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shinobi.config import load_config
    from shinobi.runner import run_recipe
    from shinobi.steps import Cab, Recipe

    monkeypatch.setattr(teardown, "KILL_WAIT", 0.3)
    recipe = Recipe("r")
    recipe.add_step("crash", Cab("crash", ["sh", "-c", "sleep 0.2 & exit 1"]))
    config = load_config({"execution.grace_period": 0.1, "cache.enabled": False})
    with teardown.use_process_table(UndyingTable(ghost)):
        (step,) = run_recipe(recipe, config=config, cwd=tmp_path, workdir=tmp_path).steps
    assert step.status == "failed" and step.details["undying"] == [ghost]
    (warning,) = step.warnings
    assert warning.startswith("it failed and left pid ")
    assert f"pid(s) {ghost} would not die" in warning
    # the next run here sees it once this ninja is gone, as after an interrupt
    assert os.listdir(tmp_path / ".shinobi" / "live")


def test_a_stop_while_what_the_step_left_is_watched_stops_it_before_the_step_returns(
    tmp_path: Path,
) -> None:
    # The step's output is set aside as the step returns: a writer it left still
    # alive then made a new file under the output's name, which the next run
    # built on and called done.
    from shinobi.backends.base import PathUse

    out = tmp_path / "out.txt"
    writer = '(for i in $(seq 1 100); do echo bg$i >> "$1"; sleep 0.05; done) & echo main >> "$1"'
    control = RunControl(grace=5)

    def stop_once_the_command_has_exited() -> None:
        deadline = time.monotonic() + 30
        while "bg3" not in (out.read_text() if out.exists() else ""):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        control.request_stop()
        control.cancel()

    stopper = threading.Thread(target=stop_once_the_command_has_exited)
    stopper.start()
    run = run_process(
        ["/bin/sh", "-c", writer, "sh", str(out)],
        cwd=str(tmp_path),
        control=control,
        outputs=[PathUse(str(out), "output", "out", "file")],
    )
    stopper.join()
    assert run.cancelled
    written = out.read_text()
    time.sleep(0.5)  # ten of the writer's lines, were it alive
    assert out.read_text() == written
