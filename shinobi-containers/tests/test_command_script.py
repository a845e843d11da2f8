"""The command's own script, named by a host path outside every mount.

A recipe running ``command=[str(Path(__file__).parent / "tools" / "x.sh")]``
from a working directory elsewhere died in every container with the
runtime's "exec ... failed: No such file or directory" (exit 127; podman said
the program "is not in the image", apptainer "stat ...: no such file"): the
file was never mounted. A project script is now mounted read-only at its own
path; a file that is not (a compiled program, one under /usr or inside a
virtualenv) fails with an account of why and the fixes. A compiled job
(``ninja compile --container-runtime ...``) carries the same mount.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend
from test_bind_mounts import FakeHost, inp

from recipes import config_for
from shinobi.backends.base import Invocation, PathUse
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe
from shinobi_containers.docker import DockerBackend
from shinobi_containers.mounts import Mount, plan_mounts
from shinobi_containers.scripts import command_scripts, script_mounts, unseen_script_reason

NINJA = str(Path(sys.executable).parent / "ninja")
SCRIPT = "/proj/recipes/tools/x.py"
CWD = "/proj/run1"


class FileHost(FakeHost):
    """A described host whose files have contents (``files``: path -> first bytes)."""

    def __init__(self, files: dict[str, bytes], links: dict[str, str] | None = None) -> None:
        super().__init__([*files, CWD], links)
        self.files = files

    def isfile(self, path: str) -> bool:
        return self.realpath(path) in self.files

    def head(self, path: str, size: int) -> bytes | None:
        return self.files[self.realpath(path)][:size]


def mounts_for(host: FileHost, *argv: str, paths: tuple[PathUse, ...] = ()) -> list[Mount]:
    planned = plan_mounts(paths, CWD, step="s", host=host)
    return script_mounts(argv, CWD, planned, host)


# -- which words of a command are its script ----------------------------------------


@pytest.mark.parametrize(
    ("argv", "scripts"),
    [
        ([SCRIPT, "-x"], [SCRIPT]),
        (["../recipes/tools/x.py"], [SCRIPT]),
        (["python3", "-u", SCRIPT, "a"], [SCRIPT]),
        (["/usr/bin/env", "FOO=1", "python3.11", SCRIPT], [SCRIPT]),
        (["bash", "../recipes/tools/x.py"], [SCRIPT]),
        (["python3", "-c", "print(1)", SCRIPT], []),
        (["python3", "-m", "pkg", SCRIPT], []),
        (["wsclean", SCRIPT], []),  # a bare name is the image's; its argument is data
    ],
)
def test_the_script_of_a_command(argv: list[str], scripts: list[str]) -> None:
    assert [path for _, path in command_scripts(argv, CWD)] == scripts


# -- what is mounted ------------------------------------------------------------------


def test_a_project_script_outside_every_mount_is_mounted_read_only_at_its_path() -> None:
    host = FileHost({SCRIPT: b"#!/usr/bin/env python3\n"})
    assert mounts_for(host, SCRIPT) == [Mount(SCRIPT, SCRIPT, readonly=True)]
    assert mounts_for(host, "python3", SCRIPT) == [Mount(SCRIPT, SCRIPT, readonly=True)]


def test_a_script_already_visible_gets_no_mount_of_its_own() -> None:
    host = FileHost({f"{CWD}/x.py": b"#!/bin/sh\n", SCRIPT: b"#!/bin/sh\n"})
    assert mounts_for(host, f"{CWD}/x.py") == []
    assert mounts_for(host, SCRIPT, paths=(inp(SCRIPT, kind="file"),)) == []


def test_a_script_reached_through_a_link_is_mounted_where_the_link_is() -> None:
    host = FileHost({SCRIPT: b"#!/bin/sh\n"}, links={"/proj/bin/x": SCRIPT})
    assert mounts_for(host, "/proj/bin/x") == [Mount(SCRIPT, "/proj/bin/x", readonly=True)]
    # a link inside the working directory shows; its target must be shown too
    host = FileHost({SCRIPT: b"#!/bin/sh\n"}, links={f"{CWD}/x": SCRIPT})
    assert mounts_for(host, f"{CWD}/x") == [Mount(SCRIPT, SCRIPT, readonly=True)]


@pytest.mark.parametrize(
    ("path", "first"),
    [
        ("/usr/bin/python3", b"#!/bin/sh\n"),  # the image's own programs live here
        ("/opt/conda/bin/wsclean-wrap", b"#!/opt/conda/bin/python\n"),
        ("/home/me/.local/bin/tool", b"#!/usr/bin/python3\n"),
        ("/home/me/venv/bin/tool", b"#!/home/me/venv/bin/python\n"),
        ("/proj/recipes/tools/mytool", b"\x7fELF\x02\x01"),  # a compiled program
    ],
)
def test_what_an_image_may_provide_is_never_shadowed(path: str, first: bytes) -> None:
    host = FileHost({path: first, "/home/me/venv/pyvenv.cfg": b"home = /usr\n"})
    assert mounts_for(host, path) == []


def test_a_project_link_to_an_installed_script_is_left_to_the_image() -> None:
    """``bin/tool`` in the project, linking to a pip ``--user`` install: the file is
    the installed tool's, which needs its environment, whatever name reaches it."""
    installed = "/home/me/.local/bin/tool"
    host = FileHost({installed: b"#!/usr/bin/python3\n"}, links={"/proj/bin/tool": installed})
    assert mounts_for(host, "/proj/bin/tool") == []


def test_the_backend_plans_the_script_mount_with_the_others(tmp_path: Path) -> None:
    """What ``ninja run``, ``--dryrun`` and ``ninja compile`` all take their mounts from."""
    script = tmp_path / "recipes" / "tools" / "x.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\necho hi\n")
    (tmp_path / "run1").mkdir()
    invocation = Invocation(step="s", argv=(str(script),), cwd=str(tmp_path / "run1"), image="i")
    spec = DockerBackend().spec(invocation, pin=False, ahead=True)
    assert Mount(str(script), str(script), readonly=True) in spec.mounts


# -- what a failure says about a file that is not mounted ----------------------------

ELF_TOOL = "/proj/recipes/tools/mytool"


def reason(argv: list[str], code: int, stderr: str) -> str | None:
    host = FileHost({ELF_TOOL: b"\x7fELF", "/usr/share/tool.sh": b"#!/bin/sh\n"})
    planned = plan_mounts((), CWD, step="s", host=host)
    return unseen_script_reason(
        argv, CWD, planned, host, engine="docker", returncode=code, stderr=stderr
    )


def test_a_program_that_could_not_start_is_said_to_be_outside_the_container() -> None:
    said = reason([ELF_TOOL], 127, f"[FATAL tini (7)] exec {ELF_TOOL} failed: No such file")
    assert said is not None and said.startswith(f"exited with code 127: {ELF_TOOL} is a file")
    assert "compiled program" in said and "declare it as an input" in said
    assert "backend.docker.run_flags" in said
    podman = reason([ELF_TOOL], 127, "ERROR (catatonit:6): failed to exec pid1: No such file")
    assert podman is not None and ELF_TOOL in podman


def test_an_installed_script_points_at_the_images_own_programs() -> None:
    said = reason(["sh", "/usr/share/tool.sh"], 2, "sh: can't open '/usr/share/tool.sh'")
    assert said is not None and "under /usr" in said and "name a program the image has" in said


@pytest.mark.parametrize(
    ("code", "stderr"),
    [
        (2, "usage: mytool [-h]\nmytool: error: unrecognized arguments: --bad"),
        (1, f"{ELF_TOOL}: something went wrong"),
    ],
)
def test_a_tools_own_failure_is_not_blamed_on_the_mounts(code: int, stderr: str) -> None:
    assert reason([ELF_TOOL], code, stderr) is None


@pytest.mark.parametrize(
    ("code", "stderr"),
    [
        (127, "/bin/sh: nope_inner: not found"),
        (127, "/bin/bash: line 1: wsclean: command not found"),
        (2, '/bin/sh: 1: Syntax error: end of file unexpected (expecting "then")'),
        (126, "/bin/sh: 1: ./tool: Permission denied"),
    ],
)
def test_a_shell_that_ran_is_not_blamed_for_what_its_command_said(code: int, stderr: str) -> None:
    """A shell puts its own name before every message: each read as "/bin/sh is a
    file on this host that the container cannot see", though the shell ran."""
    host = FileHost({"/bin/sh": b"\x7fELF", "/bin/bash": b"\x7fELF"})
    planned = plan_mounts((), CWD, step="s", host=host)
    shell = stderr.split(":", 1)[0]
    said = unseen_script_reason(
        [shell, "-c", "x"], CWD, planned, host, engine="docker", returncode=code, stderr=stderr
    )
    assert said is None
    unstarted = f"[FATAL tini (7)] exec {shell} failed: No such file or directory"
    said = unseen_script_reason(
        [shell, "-c", "x"], CWD, planned, host, engine="docker", returncode=127, stderr=unstarted
    )
    assert said is not None and f"{shell} is a file on this host" in said


def test_a_mounted_script_whose_interpreter_is_missing_names_the_interpreter() -> None:
    host = FileHost({SCRIPT: b"#!/home/me/venv/bin/python\nprint(1)\n"})
    planned = [Mount(SCRIPT, SCRIPT, readonly=True)]
    said = unseen_script_reason(
        [SCRIPT],
        CWD,
        planned,
        host,
        engine="apptainer",
        returncode=255,
        stderr=f"FATAL:   exec {SCRIPT} failed: a shared library is likely missing in the image",
        engine_failed=True,
    )
    assert said is not None and "'/home/me/venv/bin/python'" in said
    # the script ran, and a command inside it was missing: that is the script's to say
    ran = f"{SCRIPT}: line 3: /opt/bin/foo: No such file or directory"
    assert (
        unseen_script_reason(
            [SCRIPT], CWD, planned, host, engine="docker", returncode=127, stderr=ran
        )
        is None
    )


# -- live, on every engine -------------------------------------------------------------


def project(tmp_path: Path) -> tuple[Path, Path]:
    """A recipe folder's tools/hello.sh (writes hello.txt where it runs) and a run folder."""
    tmp_path.chmod(0o755)
    script = tmp_path / "proj" / "recipes" / "tools" / "hello.sh"
    script.parent.mkdir(parents=True)
    script.write_text('#!/bin/sh\necho "hello $1" > hello.txt\n')
    script.chmod(0o755)
    run = tmp_path / "proj" / "run1"
    run.mkdir()
    run.chmod(0o777)
    return script, run


def run_command(engine: str, argv: list[str], cwd: Path) -> tuple[str, str | None]:
    recipe = Recipe(name="tool")
    recipe.add_step("only", Cab(name="tool", command=argv, image=image(engine)))
    result = run_recipe(recipe, backend=engine, config=config_for(engine), cwd=cwd, use_cache=False)
    return result.steps[0].status, result.steps[0].error


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("form", ["path", "interpreter"])
def test_a_script_beside_the_recipe_runs_in_the_container(
    engine: str, form: str, tmp_path: Path
) -> None:
    live_backend(engine)
    script, run = project(tmp_path)
    argv = (
        [str(script), "world"] if form == "path" else ["sh", "../recipes/tools/hello.sh", "world"]
    )
    status, error = run_command(engine, argv, run)
    assert status == "ok", error
    assert (run / "hello.txt").read_text() == "hello world\n"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_compiled_program_outside_the_mounts_fails_saying_why(
    engine: str, tmp_path: Path
) -> None:
    live_backend(engine)
    script, run = project(tmp_path)
    tool = script.parent / "mytool"
    shutil.copy("/bin/true", tool)  # an ELF program: never mounted over an image
    status, error = run_command(engine, [str(tool)], run)
    assert status == "failed"
    assert error is not None and f"{tool} is a file on this host that the {engine}" in error
    assert "move it under the working directory, declare it as an input" in error


def test_a_project_kept_under_an_environment_s_folder_is_still_a_project() -> None:
    """A tox or nox environment's tmp/ holds test projects: only what the environment
    installs (bin/, lib/, ...) is the image's business."""
    path = "/w/.nox/env/tmp/proj/tools/x.sh"
    host = FileHost({path: b"#!/bin/sh\n", "/w/.nox/env/pyvenv.cfg": b"home = /usr\n"})
    assert mounts_for(host, path) == [Mount(path, path, readonly=True)]
    installed = "/w/.nox/env/bin/tool"
    host = FileHost({installed: b"#!/bin/sh\n", "/w/.nox/env/pyvenv.cfg": b"home = /usr\n"})
    assert mounts_for(host, installed) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_virtualenv_script_is_left_to_the_image(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    _, run = project(tmp_path)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    tool = venv / "bin" / "tool"
    tool.write_text("#!/bin/sh\necho leaked > hello.txt\n")
    tool.chmod(0o755)
    status, error = run_command(engine, [str(tool)], run)
    assert status == "failed" and not (run / "hello.txt").exists()
    assert error is not None and f"installed in the Python environment {venv}" in error
    assert "name a program the image has" in error


RECIPE = """\
from pathlib import Path

from shinobi.steps import Cab, Recipe

tool = Cab(
    name="hello",
    command=[str(Path(__file__).parent / "tools" / "hello.sh"), "job"],
    image={image!r},
)
job = Recipe(name="job")
job.add_step("hello", tool)
"""


@pytest.mark.parametrize("engine", ["apptainer", "docker"])
def test_a_rendered_job_mounts_the_script_and_runs(engine: str, tmp_path: Path) -> None:
    """The command a dry run shows, and a compiled job runs (``render``), carries the
    mount, and runs as it is (compile itself is shinobi-slurm's, tested there)."""
    backend = live_backend(engine)
    script, run = project(tmp_path)
    recipe = script.parent.parent / "recipe.py"
    recipe.write_text(RECIPE.format(image=image(engine)))
    env = {**os.environ, "SHINOBI_CONFIG": os.devnull}
    compiled = subprocess.run(
        [NINJA, "run", f"{recipe}:job", "--dryrun", "--backend", engine],
        cwd=run,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    assert f"source={script},target={script},readonly" in compiled.stdout
    invocation = Invocation(
        step="hello", argv=(str(script), "job"), cwd=str(run), image=image(engine)
    )
    job = backend.render_for_job(invocation)
    try:
        done = subprocess.run(job.argv, cwd=run, capture_output=True, text=True, timeout=120)
    finally:  # as the job script does once its payload ended (no --rm: see Rendered)
        if job.stop is not None:
            subprocess.run(job.stop, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert (run / "hello.txt").read_text() == "hello job\n"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_script_whose_interpreter_the_image_lacks_says_so(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    script, run = project(tmp_path)
    script.write_text("#!/home/nobody/venv/bin/python\nprint(1)\n")
    status, error = run_command(engine, [str(script)], run)
    assert status == "failed"
    assert error is not None and "'/home/nobody/venv/bin/python'" in error, error
