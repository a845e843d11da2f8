"""A job whose payload outlives its killed client runs that payload's stop command first.

A container belongs to the engine's daemon, not to the job: when Slurm ends a
job (``scancel``, the time limit) the job's shell died of SIGTERM, Slurm then
killed what was left of the job, the engine's client among it, and the
container ran on, unseen, on the node. The container backends name a stop
command (``docker rm -f NAME``, see ``Backend.render_for_job``); the job's
script traps the signal and runs it. Here the stop command is a stand-in that
leaves a mark, so the test needs Slurm alone; the containers plugin's live
tests check that its stop command removes a running container.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.graph import build_graph
from shinobi.offload.base import CompileOptions, compile_jobs
from shinobi.offload.jobs import JobGraph
from shinobi.plan import check_statically
from shinobi.steps import Cab, Recipe
from shinobi_slurm.compile import SlurmTarget


class _Nothing(BaseModel):
    pass


def _jobs(tmp_path: Path, scattered: bool = False) -> tuple[JobGraph, CompileOptions]:
    recipe = Recipe("nap")
    nap = Cab("nap", ["sh", "-c", "touch started; exec sleep 300"], _Nothing, _Nothing)
    recipe.add_step("nap", nap)
    plan = check_statically(build_graph(recipe), {}, str(tmp_path), keep_plan=True)
    assert plan is not None
    options = CompileOptions(workdir=tmp_path, cwd=tmp_path, run_id=f"stop-{uuid.uuid4().hex[:8]}")
    return compile_jobs(plan, options), options


def _script(tmp_path: Path, stop: list[str] | None, probe: list[str] | None = None) -> str:
    jobs, options = _jobs(tmp_path)
    if stop is not None:
        jobs.jobs[0].stops = [stop]
    if probe is not None:
        jobs.jobs[0].probes = [probe]
    workflow = SlurmTarget({}).render(jobs, options)
    (workflow.run_dir / "logs").mkdir(parents=True)  # as a submission makes it
    (path,) = workflow.write(tmp_path / "scripts").paths
    return path


def test_the_script_traps_the_end_of_the_job_only_where_a_stop_is_named(tmp_path: Path) -> None:
    plain = Path(_script(tmp_path / "a", None)).read_text()
    assert "trap " not in plain
    stopped = Path(_script(tmp_path / "b", ["docker", "rm", "-f", "shinobi-x"])).read_text()
    assert "trap 'docker rm -f shinobi-x >/dev/null 2>&1' TERM INT HUP;" in stopped
    assert 'sleep 300\' & wait "$!"' in stopped
    assert stopped.index("rc=$?") < stopped.index("trap - TERM INT HUP") < stopped.index("kill -s")


def test_an_undisturbed_payload_keeps_its_exit_status(tmp_path: Path) -> None:
    """The payload runs in the background behind the trap; its status still reaches rc."""
    text = Path(_script(tmp_path, ["true"])).read_text()
    assert "touch started; exec sleep 300" in text
    text = text.replace("touch started; exec sleep 300", "exit 3")
    done = subprocess.run(["bash", "-c", text], cwd=tmp_path, check=False, timeout=60)
    assert done.returncode == 3


@pytest.mark.parametrize(("said", "status"), [("true", -9), ("false", 0)])
def test_a_payload_the_engine_killed_for_memory_ends_the_job_as_a_kill(
    tmp_path: Path, said: str, status: int
) -> None:
    """A worker the engine killed for memory left the payload to exit 0: the job read
    "completed". Its probe says so now (docker's OOMKilled), and the job ends by
    SIGKILL, which ``ninja status`` reads as out of memory; then the container goes."""
    removed = tmp_path / "removed"
    text = Path(_script(tmp_path, ["touch", str(removed)], ["echo", said])).read_text()
    text = text.replace("touch started; exec sleep 300", "exit 0")
    done = subprocess.run(
        ["bash", "-c", text], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == status, done.stderr
    assert ("killed the step for using more memory" in done.stderr) is (said == "true")
    assert removed.exists()  # the stop command ran once the probe had asked


@pytest.mark.usefixtures("slurm")
def test_a_cancelled_job_runs_its_payloads_stop_command(tmp_path: Path) -> None:
    marker = tmp_path / "stopped"
    script = _script(tmp_path, ["touch", str(marker)])
    job = subprocess.run(
        ["sbatch", "--parsable", script], capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "started").exists():
            assert time.monotonic() < deadline, "the job never started"
            time.sleep(0.2)
        subprocess.run(["scancel", job], check=True)
        deadline = time.monotonic() + 120  # a busy controller delivers the signal late
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marker.exists(), "the job was cancelled without running its stop command"
    finally:
        subprocess.run(["scancel", job], check=False)
