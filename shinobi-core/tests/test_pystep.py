"""@pystep: in this process natively, under a venv's own interpreter, in an image
only on a container runtime; values cross as JSON; the workspace outlives teardown."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel
from test_venv_fixtures import made_venv

import shinobi
from shinobi import Recipe
from shinobi.backends.base import (
    Backend,
    BackendRun,
    Capabilities,
    Invocation,
    RunControl,
)
from shinobi.backends.process import run_process
from shinobi.config import load_config
from shinobi.graph import build_graph
from shinobi.loaders import load_target
from shinobi.pyrunner import BOOT, RUNNER
from shinobi.runner import run_recipe
from shinobi.scheduler import run_graph
from shinobi.session import Session
from shinobi.steps import Cab, File, ParamMeta, StepResult

__all__ = ["made_venv"]

Ninja = Callable[..., subprocess.CompletedProcess[str]]

STEPS = '''
import os, sys
from pathlib import Path
from pydantic import BaseModel, Field
import shinobi
from shinobi import Recipe


class Where(BaseModel):
    pid: int
    prefix: str
    click: str
    path: list[str]
    note: Path


@shinobi.pystep(venv={venv!r}, image="shinobi-test/python:bookworm")
def where(note: Path, text: str = "hello") -> Where:
    """Report the interpreter it runs in, and write text next to note."""
    try:
        import click
    except ModuleNotFoundError:  # an interpreter without one: never ninja's, lent
        click = None
    note.write_text(text)
    print("where() ran")
    return Where(pid=os.getpid(), prefix=sys.prefix, path=sys.path, note=note,
                 click=vars(click).get("__version__", "?") if click else "absent")


@shinobi.pystep(venv={venv!r})
def boom(x: int) -> int:
    raise ValueError(f"boom {{x}}")


@shinobi.pystep(venv={venv!r})
def double(x: int) -> int:
    return 2 * x


@shinobi.pystep(venv={venv!r})
def leaves(code: object) -> int:
    sys.exit(code)


exiting = Recipe("exiting")
exiting.add_step("leaves", leaves, code=5)


class In(BaseModel):
    note: Path = Path("note.txt")


class Out(BaseModel):
    pid: int
    note: Path


recipe = Recipe("r", In, Out)
recipe.add_step("where", where, note=recipe.inputs.note, text="from the recipe")
recipe.set_output("pid", recipe.outputs.where.pid)
recipe.set_output("note", recipe.outputs.where.note)

failing = Recipe("failing")
failing.add_step("boom", boom, x=7)


class Stats(BaseModel):
    rms: float
    peak: float


@shinobi.pystep(venv={venv!r})
def half(x: int) -> Stats:
    return {{"rms": x}}  # no peak


unfinished = Recipe("unfinished")
unfinished.add_step("half", half, x=7)


class Aliased(BaseModel):
    rms: float = Field(alias="RMS")


@shinobi.pystep(venv={venv!r})
def measured(how: str) -> Aliased:
    if how == "model":
        return Aliased(RMS=1.5)
    return {{"rms": 1.5}} if how == "name" else {{"RMS": 1.5}}


measuring = Recipe("measuring")
measuring.add_step("measured", measured, how="model")


class Many(BaseModel):
    xs: list[int]


class Doubled(BaseModel):
    ys: list[int]


scattered = Recipe("scattered", Many, Doubled)
scattered.add_step("double", double, scatter=["x"], x=scattered.inputs.xs)
scattered.set_output("ys", scattered.outputs.double.result)
'''


@pytest.fixture
def steps(tmp_path: Path, made_venv: Path) -> Callable[[str], Any]:
    source = tmp_path / "steps.py"
    source.write_text(textwrap.dedent(STEPS.format(venv=str(made_venv))))
    return lambda name: load_target(f"{source}:{name}")


def config(**extra: Any) -> Any:
    return load_config({"cache.enabled": False, **extra})


def test_natively_a_pystep_is_a_call_in_this_process(
    steps: Callable[[str], Any], tmp_path: Path
) -> None:
    recipe = steps("recipe")
    # backend="native" on the step overrides what its venv= would select.
    recipe.steps[0].backend = "native"
    result = run_recipe(recipe, {"note": str(tmp_path / "n.txt")}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs["pid"] == os.getpid()
    assert result.steps[0].backend == "python"


@pytest.mark.parametrize(
    ("code", "status"), [(5, 5), (0, 1), (None, 1), ("bad thing", 1), (300, 1)]
)
@pytest.mark.parametrize("where", ["native", "venv"])
def test_sys_exit_is_said_and_recorded_alike_in_this_process_and_in_a_venv(
    steps: Callable[[str], Any], tmp_path: Path, where: str, code: object, status: int
) -> None:
    """In another interpreter it read "exited with code 5", hiding that the
    function asked to end (an audit saw it in containers); and the codes
    differed: 0 natively, 1 in a venv for sys.exit(0), 300 against 44."""
    recipe = steps("exiting")
    recipe.steps[0].backend = where
    recipe.steps[0].wiring["code"] = code
    step = run_recipe(recipe, cwd=tmp_path, config=config()).steps[0]
    said = f"called sys.exit({code!r})"
    assert (step.status, step.error, step.returncode) == ("failed", said, status)


@pytest.mark.parametrize("how", ["model", "name", "alias"])
@pytest.mark.parametrize("where", ["native", "venv"])
def test_a_return_model_with_an_aliased_field_gives_its_output(
    steps: Callable[[str], Any], tmp_path: Path, where: str, how: str
) -> None:
    """Returned as the model, or as a dict by field name or by alias: every form
    failed ("output 'RMS': Field required"), in this process and in a venv."""
    recipe = steps("measuring")
    recipe.steps[0].backend = where
    recipe.steps[0].wiring["how"] = how
    step = run_recipe(recipe, cwd=tmp_path, config=config()).steps[0]
    assert step.ok, step.error
    assert step.outputs == {"rms": 1.5}


def test_with_venv_it_runs_under_the_venv_s_interpreter(
    steps: Callable[[str], Any], made_venv: Path, tmp_path: Path
) -> None:
    result = run_recipe(steps("recipe"), cwd=tmp_path, config=config())
    assert result.ok, result.error
    step = result.steps[0]
    assert step.backend == "venv"
    seen = step.outputs
    assert seen["pid"] != os.getpid()
    assert seen["prefix"] == str(made_venv)
    assert seen["click"] == "venv-own"  # the venv's package, not the one ninja runs with
    # Paths cross as strings and come back as Paths, relative to the step's cwd.
    assert seen["note"] == Path("note.txt") and isinstance(result.outputs["note"], Path)
    assert (tmp_path / "note.txt").read_text() == "from the recipe"
    assert "where() ran" in step.stdout
    # shinobi and pydantic came from ninja's own site by a finder of their names
    # alone: that site is not on the step's path, so nothing else comes from it.
    assert any(p.startswith(str(made_venv)) for p in seen["path"])
    assert str(Path(RUNNER).parents[2]) not in seen["path"]
    # The workspace is gone once the step returned.
    assert not any((tmp_path / ".shinobi" / "runs").glob("*/pysteps/*"))


SIBLING = """
import shinobi


@shinobi.pystep(venv={venv!r})
def helper_file() -> str:
    import hello_tool  # the recipe's own helper module, and a package in the venv

    return hello_tool.__file__
"""


def test_a_module_beside_the_pystep_wins_over_a_venv_package_of_its_name(
    made_venv: Path, tmp_path: Path
) -> None:
    """The step's own directory comes first on its path, as for a script run by
    ``python``: a helper module beside the recipe that shares a name with a
    package in the venv was otherwise replaced by that package."""
    (tmp_path / "hello_tool.py").write_text("")
    source = tmp_path / "with_helper.py"
    source.write_text(SIBLING.format(venv=str(made_venv)))
    result = run_recipe(load_target(f"{source}:helper_file"), cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.steps[0].outputs == {"result": str(tmp_path / "hello_tool.py")}


def test_a_raising_pystep_fails_with_the_exception_and_its_traceback(
    steps: Callable[[str], Any], tmp_path: Path
) -> None:
    result = run_recipe(steps("failing"), cwd=tmp_path, config=config())
    assert not result.ok
    assert result.failed_step == "boom"
    assert result.error == "the pystep raised ValueError: boom 7"
    said = result.steps[0].stderr
    assert "Traceback" in said and 'raise ValueError(f"boom {x}")' in said
    # from the pystep's own frame on, as in ninja's process: the runner's say nothing
    assert "pyrunner" not in said, said


def test_a_venv_pystep_whose_outputs_miss_a_field_fails_in_one_line(
    steps: Callable[[str], Any], tmp_path: Path
) -> None:
    result = run_recipe(steps("unfinished"), cwd=tmp_path, config=config())
    assert not result.ok and result.error is not None
    assert "\n" not in result.error
    assert result.error.endswith("output 'peak': Field required")
    assert "peak" in result.steps[0].stderr  # the whole account is kept


def test_scattered_pysteps_each_run_in_the_venv(
    steps: Callable[[str], Any], tmp_path: Path
) -> None:
    result = run_recipe(steps("scattered"), {"xs": [1, 2, 3]}, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs["ys"] == [2, 4, 6]
    assert [s.name for s in result.steps[0].slices or []] == ["double[0]", "double[1]", "double[2]"]


def test_ninja_runs_a_venv_pystep_from_a_recipe_file(
    ninja: Ninja, steps: Callable[[str], Any], made_venv: Path, tmp_path: Path
) -> None:
    done = ninja("run", "steps.py:recipe", "--note", "from-cli.txt", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outputs"]["note"] == "from-cli.txt"
    assert (tmp_path / "from-cli.txt").read_text() == "from the recipe"
    dry = ninja("run", "steps.py:recipe", "--dryrun")
    assert dry.returncode == 0 and "python:" in dry.stdout and "where" in dry.stdout


def test_a_script_run_as_main_is_not_run_again_by_the_runner(
    made_venv: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import shinobi
            from shinobi.runner import run_recipe

            @shinobi.pystep(venv={str(made_venv)!r})
            def add(a: int, b: int) -> int:
                return a + b

            if __name__ == "__main__":
                print("main block ran")
                result = run_recipe(add, {{"a": 2, "b": 3}})
                print("result", result.outputs["result"])
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SHINOBI_CACHE_ENABLED": "false"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["main block ran", "result 5"]


# -- the backend decides: a fake container runtime --------------------------------


class FakeContainer(Backend):
    """Claims images; runs the invocation with the host's own python3 (which has no
    pydantic), recording what it was given and whether the workspace existed."""

    name = "fakecontainer"
    capabilities: ClassVar[Capabilities] = Capabilities(isolation=True, images=True)

    def __init__(self, undying: tuple[int, ...] = ()) -> None:
        super().__init__({})
        self.seen: list[Invocation] = []
        self.workspace_during_run: bool | None = None
        self.undying = undying

    @staticmethod
    def host_python() -> str:
        return shutil.which("python3", path="/usr/bin:/bin") or sys.executable

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        self.seen.append(invocation)
        assert invocation.scratch_dir is not None
        self.workspace_during_run = os.path.isdir(invocation.scratch_dir)
        host_python = self.host_python()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        run = run_process(
            (host_python, *invocation.argv[1:]),
            cwd=invocation.cwd,
            control=control,
            env=env,
            stdout_path=invocation.stdout_path,
            stderr_path=invocation.stderr_path,
        )
        run.undying = self.undying
        return run


def _session(tmp_path: Path, backend: Backend, name: str) -> Session:
    session = Session(config=config(), cwd=str(tmp_path), backend_name=name)
    session.run_dir = tmp_path / ".shinobi" / "runs" / session.run_id
    (session.run_dir / "logs").mkdir(parents=True)
    session._backends[name] = backend
    return session


def test_in_a_container_runtime_with_an_image_it_runs_out_of_process(
    steps: Callable[[str], Any], tmp_path: Path
) -> None:
    fake = FakeContainer()
    session = _session(tmp_path, fake, "fakecontainer")
    recipe = steps("recipe")
    recipe.steps[0].step.venv = None
    result = run_graph(build_graph(recipe), {"note": Path("note.txt")}, session)
    assert result.ok, result.error
    (invocation,) = fake.seen
    assert invocation.image == "shinobi-test/python:bookworm"
    assert invocation.argv[:2] == ("python3", BOOT)
    assert invocation.argv[2].endswith("spec.json")
    roles = {(u.field, u.role, u.writable) for u in invocation.paths}
    workspace = invocation.scratch_dir
    # directories it writes in, themselves: declared outputs, their parents were mounted
    assert any(u.path == workspace and u.role == "input" and u.mutable for u in invocation.paths)
    assert ("shinobi", "input", False) in roles
    # steps.py sits in the working directory, which holds the writable workspace:
    # its directory is a plain input, not a read-only one a container must refuse.
    assert ("source", "input", True) in roles
    assert ("cwd", "input", True) in roles
    assert any(u.field == "cwd" and u.path == str(tmp_path) and u.mutable for u in invocation.paths)
    assert any(u.field == "note" and u.path == str(tmp_path / "note.txt") for u in invocation.paths)
    assert fake.workspace_during_run is True
    assert workspace is not None and not os.path.exists(workspace)
    assert result.steps[0].outputs["pid"] != os.getpid()
    assert (tmp_path / "note.txt").read_text() == "from the recipe"
    # the host's python3 has no click: ninja's is not lent to it (only shinobi, pydantic)
    host_has_click = (
        subprocess.run(
            [FakeContainer.host_python(), "-c", "import click"], capture_output=True
        ).returncode
        == 0
    )
    assert (result.steps[0].outputs["click"] == "absent") is not host_has_click


def test_a_workspace_is_left_in_place_while_a_process_would_not_die(
    steps: Callable[[str], Any], tmp_path: Path
) -> None:
    fake = FakeContainer(undying=(4242,))
    session = _session(tmp_path, fake, "fakecontainer")
    recipe = steps("recipe")
    recipe.steps[0].step.venv = None
    result = run_graph(build_graph(recipe), {"note": Path("note.txt")}, session)
    (invocation,) = fake.seen
    assert invocation.scratch_dir is not None and os.path.isdir(invocation.scratch_dir)
    assert result.steps[0].details["undying"] == [4242]
    assert result.steps[0].details["workspace"] == invocation.scratch_dir


def test_an_image_means_nothing_on_a_backend_that_is_not_a_container_runtime(
    steps: Callable[[str], Any], tmp_path: Path
) -> None:
    recipe = steps("recipe")
    step = recipe.steps[0].step
    step.venv = None  # image= only, on the native backend: a plain call here
    result = run_recipe(recipe, cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert result.outputs["pid"] == os.getpid()


def test_no_image_on_a_container_runtime_runs_here_with_a_warning(
    steps: Callable[[str], Any], tmp_path: Path
) -> None:
    fake = FakeContainer()
    session = _session(tmp_path, fake, "fakecontainer")
    warnings: list[str] = []

    class Keep:
        def step_started(self, name: str, info: dict[str, Any]) -> None:
            pass

        def step_finished(self, result: StepResult) -> None:
            pass

        def warning(self, message: str) -> None:
            warnings.append(message)

    session.observers.append(Keep())
    recipe = steps("recipe")
    step = recipe.steps[0].step
    step.venv = None
    step.image = None
    result = run_graph(build_graph(recipe), {"note": Path("note.txt")}, session)
    assert result.ok and result.outputs["pid"] == os.getpid()
    assert fake.seen == []
    assert any("names no image=" in w for w in warnings)


class FakeBatch(FakeContainer):
    """A backend that runs commands elsewhere and has no images (as slurm)."""

    name = "fakebatch"
    capabilities: ClassVar[Capabilities] = Capabilities(isolation=True)


def test_a_backend_that_runs_only_commands_runs_the_pystep_here_and_says_so(
    steps: Callable[[str], Any], tmp_path: Path
) -> None:
    fake = FakeBatch()
    session = _session(tmp_path, fake, "fakebatch")
    recipe = steps("recipe")
    step = recipe.steps[0].step
    step.venv = None
    result = run_graph(build_graph(recipe), {"note": Path("note.txt")}, session)
    assert result.ok and result.outputs["pid"] == os.getpid()
    assert fake.seen == []
    assert session.warnings == [
        "pystep 'where' runs in this process, on this host, not through the fakebatch backend,"
        " which runs commands only (to run it there, make it a script and give it a Cab)"
    ]


def test_a_pystep_defined_inside_a_function_cannot_cross(made_venv: Path) -> None:
    """Refused where it is declared now (test_pystep_declarations), not when it runs."""
    import shinobi

    def local(x: int) -> int:
        return x

    with pytest.raises(TypeError, match="define it at module level"):
        shinobi.pystep(venv=str(made_venv))(local)


def takes_anything(x: Any) -> None:
    return None


def test_inputs_that_are_not_json_are_refused(made_venv: Path, tmp_path: Path) -> None:
    import shinobi

    takes = shinobi.pystep(venv=str(made_venv))(takes_anything)
    result = run_recipe(takes, {"x": object()}, cwd=tmp_path, config=config())
    assert not result.ok
    assert "cannot cross to another interpreter as JSON" in (result.error or "")


def test_a_read_only_directory_holding_a_writable_one_becomes_a_plain_input() -> None:
    from shinobi.backends.base import PathUse
    from shinobi.pyrunner.request import _without_read_only_parents

    uses = [
        PathUse("/work/run/ws", "output", "workspace", "dir"),
        PathUse("/work", "input", "source", "dir", writable=False),
        PathUse("/work/run", "input", "same", "dir", writable=False),
        PathUse("/opt/site", "input", "site", "dir", writable=False),
        PathUse("/work/runner", "input", "sibling", "dir", writable=False),
        PathUse("/work/run/ws", "input", "itself", "dir", writable=False),
    ]
    assert [u.writable for u in _without_read_only_parents(uses)] == [
        True,
        True,
        True,
        False,
        False,
        True,  # the writable directory itself, declared read-only too
    ]


SLEEPER = """
import os, time
from pathlib import Path
import shinobi

@shinobi.pystep(venv={venv!r})
def sleeper(marker: Path) -> None:
    marker.write_text(str(os.getpid()))
    time.sleep(300)
"""


def test_an_interrupted_pystep_is_torn_down_before_its_workspace_goes(
    made_venv: Path, tmp_path: Path
) -> None:
    import threading
    import time

    (tmp_path / "sleeper.py").write_text(SLEEPER.format(venv=str(made_venv)))
    step = load_target(f"{tmp_path / 'sleeper.py'}:sleeper")
    session = Session(config=config(**{"execution.grace_period": 1.0}), cwd=str(tmp_path))
    session.run_dir = tmp_path / ".shinobi" / "runs" / session.run_id
    (session.run_dir / "logs").mkdir(parents=True)
    from shinobi.runner import as_recipe

    marker = tmp_path / "pid"
    outcome: list[Any] = []
    thread = threading.Thread(
        target=lambda: outcome.append(
            run_graph(build_graph(as_recipe(step)), {"marker": marker}, session)
        )
    )
    thread.start()
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the pystep never started"
    workspaces = list((session.run_dir / "pysteps").iterdir())
    assert len(workspaces) == 1  # it exists while the step runs
    assert session.control.cancel() == ()
    thread.join(60)
    assert outcome and outcome[0].status == "cancelled"
    pid = int(marker.read_text())
    assert (
        not Path(f"/proc/{pid}").exists()
        or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    )
    assert not workspaces[0].exists()  # removed, after the process was gone


def test_in_this_process_relative_paths_are_the_run_s(
    steps: Callable[[str], Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # ninja's own directory is not the run's
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    recipe = steps("recipe")
    recipe.steps[0].step.venv = None
    result = run_recipe(recipe, cwd=run_dir, config=config())
    assert result.ok and result.outputs["pid"] == os.getpid()
    assert (run_dir / "note.txt").read_text() == "from the recipe"
    assert not (elsewhere / "note.txt").exists()


class FilePair(BaseModel):
    a: File


def test_in_this_process_relative_paths_inside_a_mapping_or_model_are_the_run_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a path field itself was anchored: a dict[str, File] read ninja's own
    directory's file, silently."""

    @shinobi.pystep
    def read(files: dict[str, File], pair: FilePair) -> str:
        return files["k"].read_text() + pair.a.read_text()

    elsewhere, run_dir = tmp_path / "elsewhere", tmp_path / "run"
    for folder, text in ((elsewhere, "WRONG"), (run_dir, "run")):
        folder.mkdir()
        (folder / "x.txt").write_text(text)
    monkeypatch.chdir(elsewhere)
    recipe = Recipe("r")
    recipe.add_step("read", read, files={"k": Path("x.txt")}, pair={"a": "x.txt"})
    result = run_recipe(recipe, cwd=run_dir, config=config())
    assert result.ok, result.error
    assert result.steps[0].outputs["result"] == "runrun"


def test_in_this_process_relative_paths_in_a_list_are_the_run_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anchored only as a single path, a list[File] of relative names would be read
    in ninja's own directory, where the files are not: none counted, silently."""

    @shinobi.pystep
    def count(files: list[File]) -> int:
        return sum(1 for f in files if f.exists())

    elsewhere, run_dir = tmp_path / "elsewhere", tmp_path / "run"
    elsewhere.mkdir()
    run_dir.mkdir()
    (run_dir / "a.txt").touch()
    (run_dir / "b.txt").touch()
    monkeypatch.chdir(elsewhere)
    recipe = Recipe("r")
    recipe.add_step("count", count, files=[Path("a.txt"), Path("b.txt")])
    result = run_recipe(recipe, cwd=run_dir, config=config())
    assert result.ok, result.error
    assert result.steps[0].outputs["result"] == 2


def test_natively_a_pystep_runs_here_without_a_warning(tmp_path: Path) -> None:
    """Running in this process is what the native backend does: warning that the
    pystep does not run "through the native backend" would be noise on every run."""

    @shinobi.pystep
    def add(a: int) -> int:
        return a + 1

    recipe = Recipe("r")
    recipe.add_step("add", add, a=1)
    result = run_recipe(recipe, cwd=tmp_path, config=config(**{"backend.default": "native"}))
    assert result.ok, result.error
    assert result.warnings == []


def test_sys_exit_in_a_pystep_fails_that_step_and_ninja_goes_on(tmp_path: Path) -> None:
    import shinobi
    from shinobi.runner import run_recipe
    from shinobi.steps import Recipe

    @shinobi.pystep
    def leaves(x: int = 1) -> int:
        import sys

        sys.exit(3)

    @shinobi.pystep
    def explains(x: int = 1) -> int:
        raise ValueError("first line\nsecond line")

    @shinobi.pystep
    def interrupts(x: int = 1) -> int:
        raise KeyboardInterrupt("by hand")

    class Abort(BaseException):
        pass

    @shinobi.pystep
    def aborts(x: int = 1) -> int:
        raise Abort("from a library")

    for step, said in (
        (leaves, "called sys.exit(3)"),
        (explains, "ValueError: first line"),
        (interrupts, "KeyboardInterrupt: by hand"),
        (aborts, "Abort: from a library"),
    ):
        recipe = Recipe("r")
        recipe.add_step("s", step)
        result = run_recipe(recipe, cwd=tmp_path)
        assert not result.ok and result.error is not None
        assert said in result.error and "\n" not in result.error


def test_os_exit_in_a_pystep_fails_that_step_instead_of_ending_ninja(tmp_path: Path) -> None:
    """Called in ninja's process, ``os._exit(0)`` would end the run with status 0
    and nothing after it run; a child the step forks still exits as asked."""
    import shinobi
    from shinobi.runner import run_recipe
    from shinobi.steps import Cab, Recipe

    @shinobi.pystep
    def leaves(x: int = 1) -> int:
        pid = os.fork()
        if pid == 0:
            os._exit(7)  # the forked child: a real exit
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 7
        os._exit(0)

    recipe = Recipe("r")
    recipe.add_step("leaves", leaves)
    recipe.add_step("after", Cab("after", ["/bin/touch", "after"]))
    result = run_recipe(recipe, cwd=tmp_path)
    assert not result.ok and result.failed_step == "leaves"
    assert result.error is not None and "called os._exit(0)" in result.error
    assert os._exit.__module__ == "posix"  # put back once the step returned


@pytest.mark.parametrize("kind", ["generator", "async"])
def test_a_pystep_whose_call_would_not_run_its_body_is_refused(kind: str) -> None:
    import shinobi

    def generator(x: int = 1) -> Any:
        yield x

    async def coroutine(x: int = 1) -> int:
        return x

    with pytest.raises(TypeError, match="would not run its body"):
        shinobi.pystep(generator if kind == "generator" else coroutine)


BROKEN_IMPORT = """
import sys
import shinobi
from shinobi import Recipe

if sys.argv[0].endswith("runner.py"):  # as the venv's interpreter imports it
    raise ImportError("No module named 'casacore' in this venv")


@shinobi.pystep(venv={venv!r})
def never(x: int = 1) -> int:
    return x


recipe = Recipe("broken")
recipe.add_step("never", never)
"""


def test_a_pystep_whose_module_cannot_be_imported_there_says_so_not_that_it_raised(
    made_venv: Path, tmp_path: Path
) -> None:
    source = tmp_path / "broken.py"
    source.write_text(BROKEN_IMPORT.format(venv=str(made_venv)))
    result = run_recipe(load_target(f"{source}:recipe"), cwd=tmp_path, config=config())
    assert result.error == (
        "importing the pystep's module raised ImportError: No module named 'casacore' in this venv"
    )


def _lookup(table: dict[str, int]) -> int:
    return table["missing"]


@shinobi.pystep
def looks_up(x: int) -> int:
    return _lookup({"present": x})


def test_an_in_process_pysteps_exception_leaves_its_traceback_in_the_stderr_log(
    tmp_path: Path,
) -> None:
    recipe = Recipe("r")
    recipe.add_step("look", looks_up, x=1)
    (step,) = run_recipe(recipe, cwd=tmp_path, use_cache=False).steps
    assert step.error == "KeyError: 'missing' (traceback in the step's stderr)"
    (log,) = tmp_path.rglob("logs/look.err")
    trace = log.read_text()
    assert "in looks_up\n    return _lookup(" in trace and "in _lookup\n" in trace
    assert trace.rstrip().endswith("KeyError: 'missing'")
    assert "pystep_runner" not in trace


@shinobi.pystep
def unannotated(x: int):  # type: ignore[no-untyped-def]
    return x * 2


def test_a_value_returned_by_a_pystep_declaring_no_outputs_names_the_fix(tmp_path: Path) -> None:
    recipe = Recipe("r")
    recipe.add_step("unannotated", unannotated, x=2)
    (step,) = run_recipe(recipe, cwd=tmp_path, use_cache=False).steps
    assert step.error is not None and "unannotated_outputs" not in step.error
    assert "returned int, but its return annotation declares no outputs" in step.error


def test_an_interpreter_of_another_version_is_told_so_before_borrowing_ninja_s_packages(
    tmp_path: Path,
) -> None:
    """ninja's pydantic, borrowed by another Python, failed deep in ``typing``."""
    import json
    import subprocess
    import sys

    from shinobi.pyrunner import RUNNER
    from shinobi.pyrunner.request import _NEEDED, core_paths

    (tmp_path / "steps.py").write_text("def f() -> int:\n    return 1\n")

    def run(core_python: list[int]) -> dict[str, Any]:
        spec = {
            "module_file": str(tmp_path / "steps.py"),
            "module_name": "steps",
            "import_root": str(tmp_path),
            "qualname": "f",
            "inputs": {},
            "outputs_file": str(tmp_path / "out.json"),
            "core_paths": core_paths(),
            "core_modules": list(_NEEDED),
            "core_python": core_python,
        }
        (tmp_path / "spec.json").write_text(json.dumps(spec))
        # -S: no site directory, so shinobi and pydantic are not this interpreter's own
        subprocess.run(
            [sys.executable, "-I", "-S", RUNNER, str(tmp_path / "spec.json")], check=False
        )
        found: dict[str, Any] = json.loads((tmp_path / "out.json").read_text())
        return found

    here = list(sys.version_info[:2])
    refused = run([here[0], here[1] + 1])
    assert refused["stage"] == "setup"
    assert f"is Python {here[0]}.{here[1]} and has no shinobi or pydantic" in refused["error"]
    assert f"make it with Python {here[0]}.{here[1] + 1}" in refused["error"]
    assert "error" not in run(here)  # the same version borrows them, as before


OLD_PYTHON_STEP = """
import shinobi
from shinobi import Recipe


@shinobi.pystep(venv={venv!r})
def double(x: int = 2) -> int:
    return 2 * x


recipe = Recipe("old")
recipe.add_step("double", double)
"""


@pytest.mark.parametrize(
    ("version", "python_name"),
    [
        ((2, 7, 18), "python3"),
        ((2, 7, 18), "python"),  # virtualenv's 2.7 venv (CASA 5's) has no python3
        ((3, 6, 15), "python3"),
        ((3, 10, 13), "python3"),
    ],
)
def test_a_venv_of_a_python_too_old_for_pysteps_is_named_not_a_syntax_error(
    ninja: Any,
    recipe_file: Callable[..., Path],
    tmp_path: Path,
    version: tuple[int, ...],
    python_name: str,
) -> None:
    """CASA 5's Python 2.7 or an old 3.6 venv failed to parse the runner: a
    SyntaxError in ninja's own code. Stood in for by this interpreter told, on
    start-up, that it is that version (a sitecustomize), as an old venv's
    ``bin/python3``."""
    import sys

    pretend = tmp_path / "pretend"
    pretend.mkdir()
    (pretend / "sitecustomize.py").write_text(
        f"import sys\nsys.version_info = {(*version, 'final', 0)!r}\n"
    )
    venv = tmp_path / "oldvenv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / python_name
    python.write_text(f'#!/bin/sh\nPYTHONPATH={pretend} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    recipe_file(OLD_PYTHON_STEP.format(venv=str(venv)))
    # refused before the run, the venv's python asked its version (no pyvenv.cfg)
    done = ninja("run", "recipe.py:recipe")
    assert done.returncode == 2, done.stderr
    shown = f"{version[0]}.{version[1]}"
    assert done.stderr.splitlines() == [
        f"ninja: error: step 'double': the venv {str(venv)!r} is Python {shown}, and a"
        " @pystep needs Python 3.11 or newer where it runs: make the venv with a newer"
        " Python, or make the step a Cab, whose command line runs under any Python"
    ], done.stderr
    # the runner's own start says so too (an image's python3, which nothing checks before)
    import json

    from shinobi.pyrunner import BOOT

    outputs = tmp_path / "out.json"
    (tmp_path / "spec.json").write_text(json.dumps({"outputs_file": str(outputs)}))
    started = subprocess.run(
        [str(python), BOOT, str(tmp_path / "spec.json")], capture_output=True, text=True
    )
    assert started.returncode == 1
    assert json.loads(outputs.read_text())["error"] == (
        f"{sys.executable} is Python {shown}, and a @pystep needs Python 3.11 or newer"
        " where it runs: make the venv (or image) with a newer Python, or make the step a"
        " Cab, whose command line runs under any Python"
    )
    assert "SyntaxError" not in done.stderr + started.stderr


def test_boot_is_written_in_what_an_old_python_can_parse() -> None:
    """boot.py is what a venv's Python 2.7 or 3.5 reads first, to say it is too old:
    one f-string or annotation there and that interpreter stopped at a
    SyntaxError in ninja's file instead (the test above stands in for the old
    interpreter with this one, which parses anything)."""
    import ast

    tree = ast.parse(Path(BOOT).read_text())
    newer = [
        f"line {node.lineno}: {type(node).__name__}"
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr | ast.AnnAssign | ast.NamedExpr)
        or (isinstance(node, ast.arg) and node.annotation is not None)
        or (isinstance(node, ast.FunctionDef) and node.returns is not None)
        or (
            isinstance(node, ast.ImportFrom)
            and node.module == "__future__"
            and any(a.name == "annotations" for a in node.names)
        )
    ]
    assert newer == []


MISFITS = """
import shinobi
from shinobi.steps import Recipe

@shinobi.pystep
def here() -> int:
    return "abc"

@shinobi.pystep(venv={venv!r})
def there() -> int:
    return "abc"

native = Recipe("native")
native.add_step("s", here)
in_venv = Recipe("in_venv")
in_venv.add_step("s", there)
"""


@pytest.mark.parametrize("target", ["native", "in_venv"])
def test_a_return_value_its_type_refuses_says_which_output_and_why(
    tmp_path: Path, made_venv: Path, target: str
) -> None:
    source = tmp_path / "misfits.py"
    source.write_text(MISFITS.format(venv=str(made_venv)))
    result = run_recipe(load_target(f"{source}:{target}"), cwd=tmp_path, config=config())
    assert not result.ok
    assert result.steps[0].error == (
        "the pystep returned what its return type refuses: output 'result': Input should be a"
        " valid integer, unable to parse string as an integer (got 'abc')"
    )


RETURNED = """
from pydantic import BaseModel
import shinobi
from shinobi.steps import Recipe

class Anything(BaseModel):
    v: object = None

def unannotated(n: int = 1):
    return 5

def unsendable(n: int = 1) -> Anything:
    return {{"v": object()}}

for fn in (unannotated, unsendable):
    for where, step in (("native", shinobi.pystep(fn)), ("venv", shinobi.pystep(venv={venv!r})(fn))):
        globals()[f"{{fn.__name__}}_{{where}}"] = recipe = Recipe(fn.__name__)
        recipe.add_step("s", step)
"""


@pytest.mark.parametrize(
    ("fn", "said"),
    [
        (
            "unannotated",
            "TypeError: pystep 'unannotated' returned int, but its return annotation declares"
            " no outputs: annotate the return type (-> float, or a pydantic model of its"
            " outputs) or return None",
        ),
        (
            "unsendable",
            "the pystep returned what cannot be sent back as JSON: output 'v': Unable to"
            " serialize unknown type: <class 'object'>",
        ),
    ],
)
def test_what_a_venv_pystep_returned_is_faulted_in_one_line_not_as_raised(
    tmp_path: Path, made_venv: Path, fn: str, said: str
) -> None:
    """Once the function had returned, the runner said "the pystep raised", with a
    traceback through ninja's own (lent) files; natively it is one line."""
    source = tmp_path / "returned.py"
    source.write_text(RETURNED.format(venv=str(made_venv)))
    ran = {
        where: run_recipe(load_target(f"{source}:{fn}_{where}"), cwd=tmp_path, config=config())
        for where in ("venv", "native")
    }
    venv, native = ran["venv"].steps[0], ran["native"].steps[0]
    assert (venv.status, venv.error) == ("failed", said)
    assert "Traceback" not in venv.stderr and "lent" not in venv.stderr
    if fn == "unannotated":  # natively the value is no JSON, and need not be
        assert native.error == said


INTERRUPTS = """
import os, signal
import shinobi
from shinobi.steps import Recipe

@shinobi.pystep(venv={venv!r})
def raises(n: int = 1) -> int:
    raise KeyboardInterrupt("user pressed")

@shinobi.pystep(venv={venv!r})
def signalled(n: int = 1) -> int:
    os.kill(os.getpid(), signal.SIGINT)
    return n
"""


@pytest.mark.parametrize(
    ("fn", "said"),
    [
        ("raises", "the pystep raised KeyboardInterrupt: user pressed"),
        ("signalled", "killed by SIGINT (signal 2)"),
    ],
)
def test_a_keyboard_interrupt_a_venv_pystep_raises_is_no_signal(
    tmp_path: Path, made_venv: Path, fn: str, said: str
) -> None:
    """It read "killed by SIGINT" though no signal was sent; a real one still does."""
    source = tmp_path / "interrupts.py"
    source.write_text(INTERRUPTS.format(venv=str(made_venv)))
    step = run_recipe(load_target(f"{source}:{fn}"), cwd=tmp_path, config=config()).steps[0]
    assert (step.status, step.error) == ("failed", said)


def test_a_sigint_ignored_by_whoever_started_the_runner_stays_ignored(tmp_path: Path) -> None:
    """A runner started with SIGINT ignored (under ``nohup``, as a background job
    of a script) must leave it ignored, as Python itself does: taken for an
    interrupt, the step died of a signal its starter had chosen to ignore."""
    source = tmp_path / "interrupts.py"
    source.write_text(INTERRUPTS.format(venv=str(tmp_path)))
    spec = {
        "module_file": str(source),
        "module_name": "interrupts",
        "import_root": str(tmp_path),
        "qualname": "signalled",
        "inputs": {},
        "outputs_file": str(tmp_path / "out.json"),
        "core_paths": [],
        "core_modules": [],
        "core_python": list(sys.version_info[:2]),
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    started = subprocess.run(
        ["/bin/sh", "-c", 'trap "" INT; exec "$0" "$@"', sys.executable, RUNNER, "spec.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert started.returncode == 0, started.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == {"outputs": {"result": 1}}


THREADED = """
import threading, time
import shinobi
from shinobi.steps import Recipe

@shinobi.pystep(venv={venv!r})
def leaves_a_thread(n: int = 30) -> int:
    threading.Thread(target=time.sleep, args=(n,)).start()
    print("said before returning")  # buffered: written only if the runner flushes it
    return n
"""


def test_a_venv_pystep_is_over_when_it_returns_not_when_its_threads_end(
    tmp_path: Path, made_venv: Path
) -> None:
    """The runner's sys.exit waited for the function's non-daemon thread: a step
    leaving one that never ends never finished. In this process it is over at once."""
    source = tmp_path / "threaded.py"
    source.write_text(THREADED.format(venv=str(made_venv)))
    started = time.monotonic()
    target = load_target(f"{source}:leaves_a_thread")
    step = run_recipe(target, cwd=tmp_path, config=config()).steps[0]
    assert time.monotonic() - started < 15
    assert (step.status, step.outputs) == ("ok", {"result": 30}), step.error
    assert step.stdout == "said before returning\n"


BUFFERED_LOG = """
import logging
import logging.handlers
import sys

import shinobi


@shinobi.pystep(venv={venv!r})
def chatty() -> int:
    to_stderr = logging.StreamHandler(sys.stderr)
    log = logging.getLogger("chatty")
    log.addHandler(logging.handlers.MemoryHandler(100, target=to_stderr))
    log.warning("flagged 42 baselines")
    return 1
"""


def test_a_venv_pystep_s_buffered_log_lines_reach_its_stderr(
    made_venv: Path, tmp_path: Path
) -> None:
    """The runner ends its process without the interpreter's exit (threads the
    function left must not hold the step), so it flushes logging itself: a
    buffering handler's lines were otherwise lost, where ninja's own process
    writes them at its exit."""
    source = tmp_path / "chatty.py"
    source.write_text(BUFFERED_LOG.format(venv=str(made_venv)))
    result = run_recipe(load_target(f"{source}:chatty"), cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert "flagged 42 baselines" in result.steps[0].stderr


SECRETS = """
from pathlib import Path
from pydantic import BaseModel, SecretStr
import shinobi
from shinobi.steps import Recipe

class Cred(BaseModel):
    pw: SecretStr

@shinobi.pystep(venv={venv!r})
def keep(token: SecretStr, where: str, named: dict[str, SecretStr], cred: Cred) -> int:
    said = [token, named["a"], cred.pw]
    Path(where).write_text(" ".join(s.get_secret_value() for s in said))
    return 0

r = Recipe("r")
r.add_step("keep", keep, token="hunter2", where={where!r}, named={{"a": "b2"}}, cred={{"pw": "c3"}})
"""


def test_a_secret_input_reaches_a_pystep_in_a_venv_as_its_value(
    tmp_path: Path, made_venv: Path
) -> None:
    """The runner's spec held the mask: the function got '**********'."""
    where = tmp_path / "got.txt"
    source = tmp_path / "with_secret.py"  # not secrets.py: that is a module pydantic imports
    source.write_text(SECRETS.format(venv=str(made_venv), where=str(where)))
    result = run_recipe(load_target(f"{source}:r"), cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert where.read_text() == "hunter2 b2 c3"  # in a mapping and a model too


class Measured(BaseModel):
    rms: float | None = None


def test_a_returned_key_no_output_has_fails_the_step_naming_it(tmp_path: Path) -> None:
    """It was dropped: a misspelt optional output silently became None."""
    import shinobi

    @shinobi.pystep
    def measure(x: int = 1) -> Measured:
        return {"rsm": 0.5}  # type: ignore[return-value]

    recipe = Recipe("r")
    recipe.add_step("m", measure)
    result = run_recipe(recipe, cwd=tmp_path)
    assert not result.ok
    assert "returned 'rsm', which Measured has no field for (its outputs: rms); did you" in (
        result.error or ""
    )


def test_a_venv_with_pydantic_1_is_named_as_the_problem(tmp_path: Path) -> None:
    """pydantic 1 in the step's venv shadows ninja's, and the runner failed in its
    own code ("has no attribute 'model_validate'"), worded as the user's function
    raising. (The venv's "pydantic 1" here is a package of that name and version.)"""
    venv = tmp_path / "v1"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "pydantic").mkdir()
    (site / "pydantic" / "__init__.py").write_text('VERSION = "1.10.27"\n')
    source = tmp_path / "old.py"
    source.write_text(
        textwrap.dedent(
            f"""
            import shinobi

            @shinobi.pystep(venv={str(venv)!r})
            def cube(x: int = 2) -> int:
                return x ** 3
            """
        )
    )
    step = run_recipe(load_target(f"{source}:cube"), cwd=tmp_path, config=config()).steps[0]
    assert step.status == "failed"
    assert step.error is not None
    assert "has pydantic 1.10.27" in step.error, step.error
    assert f"uv pip install --python {venv}/bin/python 'pydantic>=2'" in step.error  # no pip
    assert "the pystep raised" not in step.error


@shinobi.pystep
def names_a_mask(prefix: str = "img") -> File:
    return Path(f"{prefix}.mask")  # never written


@shinobi.pystep
def may_name_a_mask(prefix: str = "img") -> File | None:
    return Path(f"{prefix}.mask")


def test_a_path_a_pystep_returns_but_never_made_fails_that_step(tmp_path: Path) -> None:
    """The step that read it took the blame ("cat: img.mask: No such file")."""
    reader = Cab("use", "cat", ReadIn, None, {"mask": ParamMeta(positional=True)})
    recipe = Recipe("r")
    recipe.add_step("make", names_a_mask)
    recipe.add_step("use", reader, mask=recipe.outputs.make.result)
    result = run_recipe(recipe, cwd=tmp_path, config=config())
    make = result.steps[0]
    assert not result.ok and make.name == "make" and make.status == "failed"
    assert make.error == "the pystep's output 'result' names 'img.mask', which does not exist"
    optional = Recipe("r")
    optional.add_step("make", may_name_a_mask)  # where it goes, made or not: fine
    assert run_recipe(optional, cwd=tmp_path, config=config()).ok


class ReadIn(BaseModel):
    mask: File


RAISES_SECRET = """
from pydantic import BaseModel, SecretStr
import shinobi
from shinobi.steps import Recipe

class Cred(BaseModel):
    pw: SecretStr

def refuse(token: SecretStr, cred: Cred) -> int:
    raise ValueError(f"bad token {{token.get_secret_value()}} for {{cred.pw.get_secret_value()}}")

inside = shinobi.pystep(refuse)
apart = shinobi.pystep(venv={venv!r})(refuse)

for name, step in (("inside", inside), ("apart", apart)):
    globals()[name + "_r"] = recipe = Recipe(name)
    recipe.add_step("boom", step, token="hunter2", cred={{"pw": "c3po"}})
"""


@pytest.mark.parametrize("where", ["inside", "apart"])
def test_the_traceback_ninja_writes_of_a_pystep_masks_its_secrets(
    tmp_path: Path, made_venv: Path, where: str
) -> None:
    """The error line was masked, the traceback ninja (or its runner) wrote into
    the step's stderr log held the secret in plain text."""
    source = tmp_path / "raising.py"
    source.write_text(RAISES_SECRET.format(venv=str(made_venv)))
    result = run_recipe(load_target(f"{source}:{where}_r"), cwd=tmp_path, config=config())
    assert not result.ok
    logs = list((tmp_path / ".shinobi" / "runs").glob("*/logs/boom.err"))
    said = logs[0].read_text()
    assert "ValueError: bad token ********** for **********" in said, said
    assert "hunter2" not in said and "c3po" not in said
    specs = list((tmp_path / ".shinobi" / "runs").glob("*/pysteps/*/spec.json"))
    assert all(spec.stat().st_mode & 0o077 == 0 for spec in specs)


OTHERS_SECRET = """
import json, os, sys
from pathlib import Path
from pydantic import BaseModel, SecretStr
import shinobi
from shinobi.steps import Cab, ParamMeta, Recipe

class Login(BaseModel):
    token: SecretStr

@shinobi.pystep(venv={venv!r})
def peek(where: str) -> int:
    spec = json.loads(Path(sys.argv[1]).read_text())
    mode = oct(os.stat(sys.argv[1]).st_mode & 0o777)
    Path(where).write_text(json.dumps([spec.get("secrets"), mode]))
    return 0

r = Recipe("r", max_workers=1)
r.add_step("login", Cab("login", ["/bin/true"], Login, None, {{"token": ParamMeta(positional=True)}}),
           token="hunter2-db-password")
r.add_step("peek", peek, where={where!r})
"""


def test_a_pystep_in_a_venv_is_handed_no_secret_of_another_step(
    tmp_path: Path, made_venv: Path
) -> None:
    """Its spec carried every secret the run had seen, for the runner to mask; what
    it does carry (its own secrets) is readable by this user alone."""
    where = tmp_path / "seen.json"
    source = tmp_path / "others.py"
    source.write_text(OTHERS_SECRET.format(venv=str(made_venv), where=str(where)))
    result = run_recipe(load_target(f"{source}:r"), cwd=tmp_path, config=config())
    assert result.ok, result.error
    assert json.loads(where.read_text()) == [[], "0o600"]
