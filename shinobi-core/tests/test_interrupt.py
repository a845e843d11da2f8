"""Interrupting a real ``ninja run``: exit codes, nothing left running, the manifest.

The recipe runs two steps at once, each a process family whose members leave
the step's process group and even its session; a third step waits on the
first and must never start. The signal goes to ninja's whole process group,
as a terminal's Ctrl-C or a dropped ssh connection would send it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from process_doubles import UndyingTable

from shinobi import teardown
from shinobi.local_runs import local_runs
from shinobi.runner import Interrupted, run_recipe

FAMILY = Path(__file__).with_name("test_teardown_family.py")
ROLES = ("root", "group", "daemon", "clean", "stubborn")

RECIPE = """
import sys
from shinobi.steps import Cab, Recipe

FAMILY = {family!r}
TAG = {tag!r}
MARKERS = {markers!r}

def family(name):
    return Cab(name, [sys.executable, FAMILY, "root", TAG, MARKERS + "/" + name])

pipe = Recipe("pipe", max_workers={workers})
pipe.add_step("left", family("left"))
pipe.add_step("right", family("right"))
"""


def tagged(tag: str) -> list[str]:
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
            text = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry}: {text}")
    return found


def wait_for(
    paths: list[Path], proc: subprocess.Popen[str] | None = None, timeout: float = 30
) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"ninja ended early: {proc.communicate()}")
        if time.monotonic() > deadline:
            if proc is not None:
                proc.kill()  # never leave a ninja behind
            raise AssertionError(f"never appeared: {[p for p in paths if not p.exists()]}")
        time.sleep(0.02)


@pytest.fixture
def tag() -> Iterator[str]:
    value = f"shinobi-interrupt-{uuid.uuid4().hex}"
    yield value
    for line in tagged(value):
        os.kill(int(line.split(":")[0]), signal.SIGKILL)


def _ninja() -> list[str]:
    script = Path(sys.executable).with_name("ninja")
    return [str(script)] if script.exists() else [sys.executable, "-m", "shinobi.cli"]


def ninja_env(tmp_path: Path, grace: str = "1") -> dict[str, str]:
    """No user config, a private cache, a short grace period."""
    return {
        **os.environ,
        "SHINOBI_CONFIG": os.devnull,
        "SHINOBI_CACHE_DIR": str(tmp_path / "cache"),
        "SHINOBI_EXECUTION_GRACE_PERIOD": grace,
    }


def start_ninja(tmp_path: Path, *args: str, grace: str = "1") -> subprocess.Popen[str]:
    """``ninja ARGS`` in its own process group, like a job started from a terminal."""
    return subprocess.Popen(
        [*_ninja(), *args],
        cwd=tmp_path,
        env=ninja_env(tmp_path, grace),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def signal_and_wait(proc: subprocess.Popen[str], signum: int) -> str:
    """Send ``signum`` to ninja's process group; its stderr once it has exited."""
    try:
        os.killpg(proc.pid, signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return err


def signal_release_and_wait(proc: subprocess.Popen[str], signum: int, cwd: Path) -> str:
    """:func:`signal_and_wait` for a run whose Python step waits for a ``release`` file:
    it is written once ninja has had time to handle the signal, so the step is
    still running when ninja does, however slowly the run got there."""
    try:
        os.killpg(proc.pid, signum)
        time.sleep(1.5)
        (cwd / "release").touch()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return err


def write_recipe(tmp_path: Path, tag: str, workers: int = 2) -> tuple[Path, Path]:
    markers = tmp_path / "markers"
    markers.mkdir()
    source = RECIPE.format(family=str(FAMILY), tag=tag, markers=str(markers), workers=workers)
    recipe = tmp_path / "recipe.py"
    recipe.write_text(textwrap.dedent(source))
    return recipe, markers


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGQUIT, 131)],
    ids=["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"],
)
def test_a_signal_tears_every_in_flight_step_down_and_exits_128_plus_n(
    tmp_path: Path, tag: str, signum: int, code: int
) -> None:
    recipe, markers = write_recipe(tmp_path, tag)
    proc = start_ninja(tmp_path, "run", f"{recipe}:pipe", "--provenance")
    wait_for([markers / f"{step}.{role}" for step in ("left", "right") for role in ROLES], proc)
    assert len(tagged(tag)) == 2 * len(ROLES)
    err = signal_and_wait(proc, signum)
    assert proc.returncode == code, err
    assert tagged(tag) == []
    assert f"stopped by {signal.Signals(signum).name}" in err
    # said at once: the grace period must not look like ninja ignoring the signal
    assert "stopping the running steps (SIGTERM, then SIGKILL after 1 s)" in err
    (run,) = (path.name for path in (tmp_path / ".shinobi" / "runs").iterdir())
    assert f"  run {run}: `ninja logs {run}` shows what its steps printed\n" in err
    assert "Traceback" not in err
    runs = list((tmp_path / ".shinobi" / "runs").iterdir())
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["failed_step"] is None
    assert manifest["signal"] == signal.Signals(signum).name
    statuses = {s["name"]: s["status"] for s in manifest["steps"]}
    assert statuses["left"] == statuses["right"] == "cancelled"


def test_json_still_prints_the_result_of_an_interrupted_run(tmp_path: Path, tag: str) -> None:
    recipe, markers = write_recipe(tmp_path, tag)
    proc = start_ninja(tmp_path, "run", f"{recipe}:pipe", "--json")
    wait_for([markers / f"{step}.{role}" for step in ("left", "right") for role in ROLES], proc)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    document = json.loads(out)
    # as the manifest and `ninja runs` say it: stopped by a signal, no step to blame
    assert document["status"] == "interrupted" and document["signal"] == "SIGINT"
    assert document["failed_step"] is None
    assert {s["name"]: s["status"] for s in document["steps"]}["left"] == "cancelled"


def test_under_nohup_a_hangup_is_ignored_and_the_run_goes_on(tmp_path: Path, tag: str) -> None:
    """``nohup`` ignores SIGHUP so that a run outlives the logout: ninja keeps it so."""
    recipe, markers = write_recipe(tmp_path, tag)
    proc = subprocess.Popen(
        ["nohup", *_ninja(), "run", f"{recipe}:pipe"],
        cwd=tmp_path,
        env=ninja_env(tmp_path, "1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    wait_for([markers / f"{step}.{role}" for step in ("left", "right") for role in ROLES], proc)
    os.kill(proc.pid, signal.SIGHUP)
    time.sleep(0.5)
    assert proc.poll() is None, "a hangup stopped a run started under nohup"
    assert len(tagged(tag)) == 2 * len(ROLES)
    err = signal_and_wait(proc, signal.SIGTERM)  # the test's own way out
    assert proc.returncode == 143, err
    assert tagged(tag) == []


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_recipe_module_that_ignores_the_stop_signals_does_not_make_the_run_deaf(
    tmp_path: Path, tag: str, signum: int, code: int
) -> None:
    """What counts is what ninja was started with; a module that ignored SIGINT and
    SIGTERM as it loaded made the run ignore them (exit 0 once its steps ended)."""
    recipe, markers = write_recipe(tmp_path, tag)
    ignoring = "import signal\nfor _s in (signal.SIGINT, signal.SIGTERM):\n"
    ignoring += "    signal.signal(_s, signal.SIG_IGN)\n"
    recipe.write_text(ignoring + recipe.read_text())
    proc = start_ninja(tmp_path, "run", f"{recipe}:pipe")
    wait_for([markers / f"{step}.{role}" for step in ("left", "right") for role in ROLES], proc)
    err = signal_and_wait(proc, signum)
    assert proc.returncode == code, err
    assert tagged(tag) == []


def test_at_one_worker_a_signal_stops_the_running_step_and_starts_no_other(
    tmp_path: Path, tag: str
) -> None:
    """At one worker the steps run on the scheduling thread, not the main one:
    the main thread must still turn the signal into a teardown."""
    recipe, markers = write_recipe(tmp_path, tag, workers=1)
    proc = start_ninja(tmp_path, "run", f"{recipe}:pipe")
    wait_for([markers / f"left.{role}" for role in ROLES], proc)
    err = signal_and_wait(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    assert tagged(tag) == []
    assert not list(markers.glob("right.*"))  # nothing new started
    assert "Traceback" not in err


def test_a_second_interrupt_ends_the_grace_period_at_once(tmp_path: Path, tag: str) -> None:
    """A stubborn member ignores SIGTERM: with a 60 s grace period only SIGKILL,
    which a second Ctrl-C brings forward, ends it."""
    recipe, markers = write_recipe(tmp_path, tag, workers=1)
    proc = start_ninja(tmp_path, "run", f"{recipe}:pipe", grace="60")
    wait_for([markers / f"left.{role}" for role in ROLES], proc)
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(1.0)
    assert proc.poll() is None, "the grace period had not begun"
    hurried = time.monotonic()
    err = signal_and_wait(proc, signal.SIGINT)
    assert time.monotonic() - hurried < 30, "the second interrupt did not cut the grace short"
    assert proc.returncode == 130, err
    assert "ninja: interrupted again: killing the steps now (SIGKILL)" in err
    assert tagged(tag) == []
    assert "Traceback" not in err


def test_a_step_waiting_on_a_torn_down_one_never_starts(tmp_path: Path, tag: str) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    recipe = tmp_path / "chain.py"
    recipe.write_text(
        textwrap.dedent(
            f"""
            import sys
            from pathlib import Path
            from pydantic import BaseModel
            from shinobi.steps import Cab, ParamMeta, Recipe

            class FamilyIn(BaseModel):
                out: Path

            class FamilyOut(BaseModel):
                out: Path | None = None

            class AfterIn(BaseModel):
                src: Path

            first = Cab("first", [sys.executable, {str(FAMILY)!r}, "root", {tag!r},
                        {str(markers / "first")!r}], FamilyIn, FamilyOut,
                        {{"out": ParamMeta(positional=True)}})
            after = Cab("after", ["/bin/sh", "-c", "touch {markers}/after-ran"], AfterIn)
            chain = Recipe("chain", max_workers=2)
            chain.add_step("first", first, out=Path("never.txt"))
            chain.add_step("after", after, src=chain.outputs.first.out)
            """
        )
    )
    proc = start_ninja(tmp_path, "run", f"{recipe}:chain", grace="0.5")
    wait_for([markers / f"first.{role}" for role in ROLES], proc)
    err = signal_and_wait(proc, signal.SIGTERM)
    assert proc.returncode == 143, err
    assert not (markers / "after-ran").exists()
    assert tagged(tag) == []


WORKSPACE_RECIPE = """
import os, subprocess, sys, time
from shinobi.steps import Cab, Recipe, pystep

FAMILY = {family!r}
TAG = {tag!r}
MARKERS = {markers!r}

@pystep(venv=sys.prefix)
def staged() -> None:
    workspace = os.path.dirname(sys.argv[-1])  # the runner's spec.json lives there
    subprocess.Popen([sys.executable, FAMILY, "root", TAG, MARKERS + "/staged", workspace])
    time.sleep(300)

pipe = Recipe("pipe", max_workers=2)
pipe.add_step("staged", staged)
pipe.add_step("plain", Cab("plain", [sys.executable, FAMILY, "root", TAG, MARKERS + "/plain"]))
"""


@pytest.mark.skipif(
    not os.path.exists(os.path.join(sys.prefix, "bin", "python")),
    reason="needs the tests to run in a virtualenv (the venv backend runs the pystep there)",
)
def test_a_step_workspace_outlives_every_writer_in_it(tmp_path: Path, tag: str) -> None:
    """An out-of-process pystep stages its runner in a workspace; a child that
    ignores SIGTERM keeps writing there until SIGKILL. The workspace must still
    be there for as long as that writer lives, and be gone after the run."""
    markers = tmp_path / "markers"
    markers.mkdir()
    recipe = tmp_path / "staged.py"
    source = WORKSPACE_RECIPE.format(family=str(FAMILY), tag=tag, markers=str(markers))
    recipe.write_text(textwrap.dedent(source))
    proc = start_ninja(tmp_path, "run", f"{recipe}:pipe")
    wanted = [markers / f"{s}.{r}" for s in ("staged", "plain") for r in ROLES]
    wait_for([*wanted, markers / "staged.scribe"], proc)
    err = signal_and_wait(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    assert tagged(tag) == []
    assert not (markers / "staged.orphaned").exists()  # removed only after teardown
    (run_dir,) = (tmp_path / ".shinobi" / "runs").iterdir()
    assert list((run_dir / "pysteps").iterdir()) == []


def test_a_process_that_will_not_die_fails_the_run_and_is_named(
    tmp_path: Path, tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shinobi.config import load_config
    from shinobi.steps import Cab, Recipe

    monkeypatch.setattr(teardown, "KILL_WAIT", 0.3)
    markers = tmp_path / "markers"
    markers.mkdir()
    recipe = Recipe("pipe", max_workers=2)
    for name in ("left", "right"):
        command = [sys.executable, str(FAMILY), "root", tag, str(markers / name)]
        recipe.add_step(name, Cab(name, command))
    ghost = subprocess.Popen(["sleep", "300"])
    config = load_config({"execution.grace_period": 0.2, "cache.enabled": False})

    def interrupt_when_running() -> None:
        wait_for([markers / f"{s}.{r}" for s in ("left", "right") for r in ROLES])
        os.kill(os.getpid(), signal.SIGTERM)  # delivered to the main thread, as in real life

    thread = threading.Thread(target=interrupt_when_running, daemon=True)
    try:
        with teardown.use_process_table(UndyingTable(ghost.pid)):
            thread.start()
            with pytest.raises(Interrupted) as caught:
                run_recipe(recipe, config=config, cwd=tmp_path, provenance=True)
    finally:
        ghost.kill()
        ghost.wait()
    assert caught.value.exit_code == 1  # not a clean cancellation: something is still going
    assert str(ghost.pid) in str(caught.value)
    assert caught.value.undying == (ghost.pid,)
    assert tagged(tag) == []
    manifest_path = next((tmp_path / ".shinobi" / "runs").iterdir()) / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    # not a clean cancel in the records either: something of the run may still go
    assert manifest["status"] == "interrupted, not all stopped"
    assert manifest["undying"] == [ghost.pid]
    (run,) = local_runs(tmp_path)
    assert run.state == "interrupted, not all stopped"


def test_an_interrupt_in_process_raises_with_128_plus_n(tmp_path: Path, tag: str) -> None:
    from shinobi.config import load_config
    from shinobi.steps import Cab, Recipe

    markers = tmp_path / "markers"
    markers.mkdir()
    recipe = Recipe("pipe")
    recipe.add_step(
        "only", Cab("only", [sys.executable, str(FAMILY), "root", tag, str(markers / "only")])
    )
    config = load_config({"execution.grace_period": 0.3, "cache.enabled": False})

    def interrupt_when_running() -> None:
        wait_for([markers / f"only.{r}" for r in ROLES])
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_when_running, daemon=True).start()
    with pytest.raises(Interrupted) as caught:
        run_recipe(recipe, config=config, cwd=tmp_path)
    assert caught.value.exit_code == 130 and caught.value.undying == ()
    assert tagged(tag) == []


def test_a_dropped_terminal_tears_the_run_down_and_exits_129(tmp_path: Path, tag: str) -> None:
    """The real shape of a dropped ssh connection: ninja's controlling terminal
    goes away, the kernel sends SIGHUP, and every later write to the terminal
    fails. Teardown must still finish and the exit code must still say SIGHUP."""
    import fcntl
    import pty
    import termios

    recipe, markers = write_recipe(tmp_path, tag)
    env = ninja_env(tmp_path)
    master, slave = pty.openpty()

    def take_terminal() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [*_ninja(), "run", f"{recipe}:pipe", "--provenance"],
        cwd=tmp_path,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=take_terminal,
    )
    os.close(slave)
    os.set_blocking(master, False)
    try:
        deadline = time.monotonic() + 30
        wanted = [markers / f"{step}.{role}" for step in ("left", "right") for role in ROLES]
        while not all(p.exists() for p in wanted):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never got going"
            with contextlib.suppress(OSError):  # keep it drained, as a real terminal is
                os.read(master, 65536)
            time.sleep(0.02)
        os.close(master)  # hang up
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 129
    assert tagged(tag) == []
    (run_dir,) = (tmp_path / ".shinobi" / "runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert (manifest["status"], manifest["signal"]) == ("interrupted", "SIGHUP")


PYSTEP_RECIPE = """
import time
from pathlib import Path
import shinobi
from shinobi.steps import Recipe

def held(seconds: float) -> None:  # until the test releases it, after its signals
    end = time.monotonic() + seconds
    while not Path("release").exists() and time.monotonic() < end:
        time.sleep(0.05)

@shinobi.pystep
def think(seconds: float) -> int:
    Path("thinking").touch()
    held(seconds)
    return 1

pipe = Recipe("pipe")
pipe.add_step("think", think, seconds=60.0)

@shinobi.pystep(scatter=["seconds"])
def ponder(seconds: float) -> int:
    Path(f"pondering{seconds}").touch()
    held(seconds)
    return 1

fan = Recipe("fan", max_workers=2)
fan.add_step("ponder", ponder, seconds=[60.0, 60.1, 60.2])  # the third never starts
"""


@pytest.mark.slow
def test_an_in_process_pystep_is_named_as_running_on_not_claimed_torn_down(
    tmp_path: Path,
) -> None:
    (tmp_path / "recipe.py").write_text(PYSTEP_RECIPE)
    proc = start_ninja(tmp_path, "run", "recipe.py:pipe", "--no-cache")
    wait_for([tmp_path / "thinking"], proc)
    err = signal_release_and_wait(proc, signal.SIGINT, tmp_path)
    assert proc.returncode == 130, err
    assert "'think' is Python running inside ninja and cannot be stopped" in err
    assert err.splitlines()[-1] == (
        "ninja: error: stopped by SIGINT; every step was torn down but the Python step(s)"
        " 'think', which ran inside ninja to their end"
    )


@pytest.mark.slow
def test_scattered_in_process_pysteps_are_named_as_running_on_not_claimed_torn_down(
    tmp_path: Path,
) -> None:
    # their slices ran to their end, but the stopped step kept no slices to say so
    (tmp_path / "recipe.py").write_text(PYSTEP_RECIPE)
    proc = start_ninja(tmp_path, "run", "recipe.py:fan", "--no-cache")
    wait_for([tmp_path / "pondering60.0", tmp_path / "pondering60.1"], proc)
    err = signal_release_and_wait(proc, signal.SIGINT, tmp_path)
    assert proc.returncode == 130, err
    assert err.splitlines()[-1] == (
        "ninja: error: stopped by SIGINT; every step was torn down but the Python step(s)"
        " 'ponder[0]', 'ponder[1]', which ran inside ninja to their end"
    )
    assert not (tmp_path / "pondering60.2").exists()


ORCHESTRATION_RECIPE = """
import time
from pathlib import Path
import shinobi
from shinobi.steps import Cab, Recipe

echo = Cab("echo", ["/bin/echo", "made"])

@shinobi.step(echo)
def mull(ctx):
    ctx.run()
    Path("mulling").touch()
    end = time.monotonic() + 60  # its own Python, between two tools: nothing to signal
    while not Path("release").exists() and time.monotonic() < end:
        time.sleep(0.05)
    return ctx.run()

pipe = Recipe("pipe")
pipe.add_step("mull", mull)
"""


@pytest.mark.slow
def test_an_orchestration_function_s_own_python_is_named_on_an_interrupt(
    tmp_path: Path,
) -> None:
    # ninja said nothing at the Ctrl-C, waited in silence, then claimed to have
    # torn every step down
    (tmp_path / "recipe.py").write_text(ORCHESTRATION_RECIPE)
    proc = start_ninja(tmp_path, "run", "recipe.py:pipe", "--no-cache")
    wait_for([tmp_path / "mulling"], proc)
    err = signal_release_and_wait(proc, signal.SIGINT, tmp_path)
    assert proc.returncode == 130, err
    assert (
        "step 'mull' is an orchestration function: its own Python runs inside ninja and"
        " cannot be stopped, so ninja waits for it to return"
    ) in err
    assert err.splitlines()[-1] == (
        "ninja: error: stopped by SIGINT; every step was torn down but the Python step(s)"
        " 'mull', which ran inside ninja to their end"
    )


@pytest.mark.slow
def test_a_second_interrupt_names_the_python_steps_it_cannot_kill(tmp_path: Path) -> None:
    (tmp_path / "recipe.py").write_text(PYSTEP_RECIPE)
    proc = start_ninja(tmp_path, "run", "recipe.py:pipe", "--no-cache")
    wait_for([tmp_path / "thinking"], proc)
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.3)
    err = signal_release_and_wait(proc, signal.SIGINT, tmp_path)
    assert proc.returncode == 130, err
    assert (
        "ninja: interrupted again: killing the steps now (SIGKILL); Python step(s) 'think' run"
        " inside ninja and cannot be killed: waiting for them to return"
    ) in err


def test_a_step_that_ends_once_a_stop_is_asked_for_is_cancelled_not_ok(tmp_path: Path) -> None:
    """The handler asks; the teardown follows up to a poll later. A tool that
    exits 0 in between (with a partial product, on the whole tree's SIGTERM)
    must not be a success, nor cached; and nothing starts once a stop is asked."""
    from shinobi.backends.base import RunControl
    from shinobi.backends.process import run_process

    control = RunControl()
    threading.Timer(0.2, control.stop_requested.set).start()
    ended = run_process(["/bin/sh", "-c", "sleep 0.5; exit 0"], cwd=str(tmp_path), control=control)
    assert ended.cancelled and ended.returncode == 0
    never = run_process(["/bin/touch", "started"], cwd=str(tmp_path), control=control)
    assert never.cancelled and not (tmp_path / "started").exists()


def test_a_signal_before_the_first_step_stops_the_run_and_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It arrives while the run prepares (planning, checking tools): the run's
    handler is already there, nothing starts, and the records say interrupted."""
    import shinobi.runner as runner
    from shinobi.config import load_config
    from shinobi.local_runs import local_runs
    from shinobi.steps import Cab, Recipe

    real = runner.precheck_backends

    def precheck(*args: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "precheck_backends", precheck)
    recipe = Recipe("r")
    recipe.add_step("make", Cab("make", ["/bin/touch", "made"]))
    config = load_config({"cache.enabled": False, "provenance.enabled": True})
    with pytest.raises(Interrupted) as info:
        run_recipe(recipe, cwd=tmp_path, workdir=tmp_path, config=config)
    assert info.value.exit_code == 143 and not (tmp_path / "made").exists()
    (run,) = local_runs(tmp_path)
    manifest = json.loads((run.path / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert [s["status"] for s in manifest["steps"]] == ["not run"]


def test_the_stop_message_names_a_failure_that_came_first_and_nested_python() -> None:
    from shinobi.steps.result import RecipeResult, StepResult

    inner = StepResult("outer.py", "ok", details={"ran_on": True})
    result = RecipeResult(
        "r",
        "cancelled",
        steps=[
            StepResult("bad", "failed", returncode=4, error="exited with code 4"),
            StepResult("outer", "cancelled", details={"steps": [inner]}),
        ],
    )
    said = str(Interrupted(signal.SIGINT, result, ()))
    assert "but the Python step(s) 'outer.py', which ran inside ninja" in said
    assert said.endswith("step 'bad' had failed before: exited with code 4")


def test_a_step_whose_cache_key_was_being_worked_out_when_stopped_never_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hashing a large input can take a while: a Ctrl-C meanwhile must not be
    followed by the step starting (and being recorded with a made-up signal)."""
    from shinobi.cache import StepCache
    from shinobi.config import load_config
    from shinobi.steps import Cab, Recipe

    real = StepCache.material  # what a step's key is made of: where the hashing is

    def material(self: StepCache, *args: object, **kwargs: object) -> object:
        os.kill(os.getpid(), signal.SIGINT)
        # Hashing takes a while, and gives up the GIL as it reads: the main
        # thread runs the handler meanwhile (without this pause, the handler
        # could come only after the step had started, which is another test's).
        time.sleep(0.2)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(StepCache, "material", material)
    started: list[str] = []

    class Watch:
        def step_started(self, name: str, info: dict[str, object]) -> None:
            started.append(name)

        def step_finished(self, result: object) -> None:
            pass

        def warning(self, message: str) -> None:
            pass

    recipe = Recipe("r")
    recipe.add_step("make", Cab("make", ["/bin/touch", "made"]))
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    with pytest.raises(Interrupted) as info:
        run_recipe(recipe, cwd=tmp_path, workdir=tmp_path, config=config, observers=[Watch()])
    (step,) = info.value.result.steps
    assert step.status == "cancelled" and step.returncode is None and step.signal is None
    assert started == [] and not (tmp_path / "made").exists()


BIG_INPUT = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    src: File

read = Cab("read", ["/bin/touch", "started"], inputs_model=In,
           field_meta={"src": ParamMeta(positional=True)})
recipe = Recipe("big")
recipe.add_step("read", read, src="big.bin")
"""


def _wait_reading(proc: subprocess.Popen[str], path: Path, timeout: float = 120) -> None:
    """Until ``proc`` has ``path`` open: a timer would guess how long start-up takes on a
    loaded machine, and a signal in the first half second meets a ninja not yet running."""
    fds, wanted = Path(f"/proc/{proc.pid}/fd"), os.path.realpath(path)
    deadline = time.monotonic() + timeout
    while True:
        try:
            if any(os.path.realpath(fds / fd) == wanted for fd in os.listdir(fds)):
                return
        except FileNotFoundError:  # an fd closed while it was looked at
            pass
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, f"ninja never opened {path}"
        time.sleep(0.05)


def test_a_stop_while_a_large_input_is_hashed_does_not_wait_for_the_hash(tmp_path: Path) -> None:
    """A 64 GB input takes minutes to hash for the step cache; a Ctrl-C must
    end the run at once, the step never started and nothing remembered."""
    (tmp_path / "big.bin").touch()
    os.truncate(tmp_path / "big.bin", 64 * 1024**3)  # sparse: costs no disk, all of it read
    (tmp_path / "recipe.py").write_text(BIG_INPUT)
    proc = start_ninja(tmp_path, "run", "recipe.py:recipe")
    _wait_reading(proc, tmp_path / "big.bin")  # hashing it (which alone takes minutes)
    err = signal_and_wait(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    assert "stopped by SIGINT" in err and "Traceback" not in err
    assert not (tmp_path / "started").exists()
    memo = tmp_path / "cache" / "memo"
    assert not any("big.bin" in p.read_text() for p in memo.rglob("*.json"))


def test_an_interrupt_of_one_run_leaves_the_other_runs_of_the_process_alone(
    tmp_path: Path,
) -> None:
    """A script running recipes in threads, or one after another: the teardown of
    the interrupted run swept every step of the process by its tag, so the run
    in the other thread failed "killed by SIGTERM", and the server an earlier
    run left running on purpose was killed."""
    from shinobi.config import load_config
    from shinobi.steps import Cab, Recipe

    config = load_config({"execution.grace_period": 0.3, "cache.enabled": False})
    first, other, stopped = tmp_path / "first", tmp_path / "other", tmp_path / "stopped"
    for folder in (first, other, stopped):
        folder.mkdir()
    server = Recipe("server")  # ends ok, leaving a server behind it as docs allow
    serve = "sleep 300 >/dev/null 2>&1 & echo $! > server.pid"
    server.add_step("serve", Cab("serve", ["sh", "-c", serve]))
    assert run_recipe(server, config=config, cwd=first).ok
    server_pid = int((first / "server.pid").read_text())
    beside = Recipe("beside")
    beside.add_step("wait", Cab("wait", ["sh", "-c", "touch going; sleep 3"]))
    results: list[Any] = []
    thread = threading.Thread(
        target=lambda: results.append(run_recipe(beside, config=config, cwd=other))
    )
    thread.start()
    try:
        wait_for([other / "going"])
        victim = Recipe("victim")
        victim.add_step("wait", Cab("wait", ["sh", "-c", "touch going; sleep 30"]))

        def interrupt_when_running() -> None:
            wait_for([stopped / "going"])
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt_when_running, daemon=True).start()
        with pytest.raises(Interrupted):
            run_recipe(victim, config=config, cwd=stopped)
    finally:
        thread.join()
        alive = os.path.exists(f"/proc/{server_pid}")
        with contextlib.suppress(ProcessLookupError):
            os.kill(server_pid, signal.SIGKILL)
    (result,) = results
    assert result.ok, result.error
    assert alive, "the interrupt of another run killed the server this one left"
