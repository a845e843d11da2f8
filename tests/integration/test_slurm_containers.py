"""``ninja compile --engine slurm --container-runtime docker``, submitted to the live Slurm.

Compiling to Slurm with container steps needs shinobi-slurm and shinobi-containers
installed together, which no package's own suite has: the compiled job's
``docker run`` line was never run by a real slurmd.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import Ninja, apptainer_image, docker_facts

#: Says where it ran: the Debian host has /etc/debian_version, the busybox image has not.
WHERE = 'if [ -e /etc/debian_version ]; then echo host; else echo image; fi > "$0"'

RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, OutputRef, ParamMeta, Recipe

class Out(BaseModel):
    out: Path

class Made(BaseModel):
    out: File | None = None

class Both(BaseModel):
    first: Path
    out: Path

WHERE = {where!r}
boxed = Cab("boxed", ["sh", "-c", WHERE], Out, Made, {{"out": ParamMeta(positional=True)}},
            image={image!r})
# Runs on the node itself, after boxed: appends where it ran to boxed's output.
bare = Cab("bare", ["sh", "-c", 'cat "$0" > "$1" && ' + WHERE.replace('> "$0"', '>> "$1"')],
           Both, Made, {{"first": ParamMeta(positional=True), "out": ParamMeta(positional=True)}})
r = Recipe("r")
r.add_step("boxed", boxed, out=Path("boxed.txt"))
r.add_step("bare", bare, first=OutputRef(step="boxed", field="out"), out=Path("both.txt"))
"""


def _status(ninja: Ninja, handle: str) -> dict[str, Any]:
    done = ninja("status", handle, "--json")
    assert done.stdout, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _wait_final(ninja: Ninja, handle: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        found = _status(ninja, handle)
        if found["state"] in ("completed", "failed", "cancelled"):
            return found
        assert time.monotonic() < deadline, f"launch still {found['state']}: {found['summary']}"
        time.sleep(1.0)


@pytest.fixture
def recipe(tmp_path: Path) -> str:
    image = docker_facts()["images"]["busybox"]
    (tmp_path / "r.py").write_text(RECIPE.format(where=WHERE, image=image))
    return "r.py:r"


@pytest.mark.usefixtures("slurm", "docker")
def test_a_compiled_job_runs_its_step_in_docker_and_the_next_job_on_the_node(
    ninja: Ninja, recipe: str, tmp_path: Path
) -> None:
    shown = ninja("compile", recipe, "--engine", "slurm", "--container-runtime", "docker")
    assert shown.returncode == 0, shown.stderr
    assert "docker run --name shinobi-" in shown.stdout  # the boxed step's job starts its container
    # and, once it ended, asks whether docker killed it for memory, then removes it
    assert "docker inspect --format '{{.State.OOMKilled}}'" in shown.stdout
    assert "1 step(s) declare no image (bare)" in shown.stderr

    done = ninja(
        "compile", recipe, "--engine", "slurm", "--container-runtime", "docker", "--submit",
        "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    launch = json.loads(done.stdout)
    found = _wait_final(ninja, launch["handle"])
    assert found["state"] == "completed", found["summary"]
    assert (tmp_path / "boxed.txt").read_text() == "image\n"
    assert (tmp_path / "both.txt").read_text() == "image\nhost\n"
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=shinobi.run={launch['run_id']}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert left.stdout == "", "the job left its container behind"


@pytest.mark.usefixtures("slurm", "apptainer")
def test_a_step_that_names_apptainer_runs_in_it_on_the_cluster_unasked(
    ninja: Ninja, tmp_path: Path
) -> None:
    """A step declared backend="apptainer" ran on the node's bare software unless the
    compile named --container-runtime: the recipe did not move to the cluster unchanged."""
    recipe = RECIPE.format(where=WHERE, image=apptainer_image()).replace(
        'r.add_step("boxed", boxed,', 'r.add_step("boxed", boxed, backend="apptainer",'
    )
    (tmp_path / "r.py").write_text(recipe)
    shown = ninja("compile", "r.py:r", "--engine", "slurm")
    assert shown.returncode == 0, shown.stderr
    assert "apptainer" in shown.stdout and "declare an image" not in shown.stderr
    done = ninja("compile", "r.py:r", "--engine", "slurm", "--submit", "--json")
    assert done.returncode == 0, done.stderr
    found = _wait_final(ninja, json.loads(done.stdout)["handle"])
    assert found["state"] == "completed", found["summary"]
    assert (tmp_path / "both.txt").read_text() == "image\nhost\n"


#: A worker of the step's killed for memory while the step's own shell exits 0.
HUNGRY = """
from pydantic import BaseModel
from shinobi.resources import Resources
from shinobi.steps import Cab, Recipe

class Nothing(BaseModel):
    pass

hungry = Cab(
    "hungry",
    ["sh", "-c", "dd if=/dev/zero of=/dev/null bs=300M count=1; echo dd said $?"],
    Nothing,
    Nothing,
    image={image!r},
    resources=Resources(memory="64MiB"),
)
r = Recipe("r")
r.add_step("hungry", hungry)
"""


@pytest.mark.usefixtures("slurm", "apptainer")
def test_a_compiled_apptainer_job_killed_for_memory_reads_out_of_memory(
    ninja: Ninja, tmp_path: Path
) -> None:
    """apptainer's own --memory moved the payload out of the job's cgroup: the kill of a
    worker went unrecorded and the launch read completed. The job's --mem limits it."""
    (tmp_path / "hungry.py").write_text(HUNGRY.format(image=apptainer_image()))
    args = ("compile", "hungry.py:r", "--engine", "slurm", "--container-runtime", "apptainer")
    shown = ninja(*args)
    assert shown.returncode == 0, shown.stderr
    assert "#SBATCH --mem=64M" in shown.stdout and "--memory" not in shown.stdout
    done = ninja(*args, "--submit", "--json")
    assert done.returncode == 0, done.stderr
    found = _wait_final(ninja, json.loads(done.stdout)["handle"])
    assert found["state"] == "failed", found["summary"]
    (step,) = found["steps"]
    assert "out of memory" in step["detail"], step


#: One step, no image: nothing for compile to note before the error.
TOUCH = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class I(BaseModel):
    out: Path

class O(BaseModel):
    out: File | None = None

touch = Cab("touch", "/bin/touch", I, O, {"out": ParamMeta(positional=True)})
r = Recipe("r")
r.add_step("a", touch, out=Path("a.txt"))
"""


def test_a_file_where_the_directory_should_be_is_said_so(ninja: Ninja, tmp_path: Path) -> None:
    """Moved from shinobi-core's test_compile_output_dir: compiling needs an engine,
    so in core's own suite it was always skipped."""
    (tmp_path / "touch.py").write_text(TOUCH)
    (tmp_path / "afile").write_text("")
    done = ninja("compile", "touch.py:r", "-o", "afile/sub")
    assert done.returncode == 74, done.stderr
    assert f"{tmp_path / 'afile'} is a file, where a directory is needed" in done.stderr
    assert done.stderr.count("\n") == 1
