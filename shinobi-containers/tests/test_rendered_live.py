"""A rendered docker/podman step (what a compiled Slurm job runs) leaves no container.

No ninja is there to remove the container, so the job does, as its script
runs the rendered parts: the command; once it ended, the probe asking whether
the engine killed it for memory; then the stop command, which removes it. When
the job is cancelled (``scancel`` sends SIGTERM to the job's processes, here
the engine client), the script's trap runs the stop command. Run live against
both engines.
"""

from __future__ import annotations

import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from live_engines import OCI_ENGINES, image, live_backend, shinobi_containers_of

from shinobi.backends.base import Invocation, PathUse, Rendered
from shinobi.resources import Resources


def rendered(
    engine: str,
    tmp_path: Path,
    script: str,
    paths: tuple[PathUse, ...] = (),
    resources: Resources | None = None,
) -> tuple[Rendered, str]:
    backend = live_backend(engine)
    run_id = f"rendered-{uuid.uuid4().hex[:8]}"
    invocation = Invocation(
        step="job",
        argv=("/bin/sh", "-c", script),
        cwd=str(tmp_path),
        image=image(engine),
        run_id=run_id,
        paths=paths,
        resources=resources,
    )
    return backend.render_for_job(invocation), run_id


def as_a_job(job: Rendered, cwd: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ``job`` as a job script does once the payload ends: the command, then the
    memory probe, then the stop command; the command's outcome and the probe's word."""
    done = subprocess.run(job.argv, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert job.oom_probe is not None and job.stop is not None
    said = subprocess.run(job.oom_probe, capture_output=True, text=True, timeout=60).stdout
    subprocess.run(job.stop, capture_output=True, timeout=120)
    return done, said.strip()


def gone(engine: str, run_id: str, timeout: float = 30.0) -> list[str]:
    """The run's containers still there after ``timeout`` (none, when all is well)."""
    deadline = time.monotonic() + timeout
    left = shinobi_containers_of(engine, run_id)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = shinobi_containers_of(engine, run_id)
    return left


def wait_until_started(client: subprocess.Popen[bytes], directory: Path) -> None:
    """Until the payload has written ``started`` in ``directory`` (its container runs)."""
    deadline = time.monotonic() + 60
    while not (directory / "started").exists():
        assert client.poll() is None, "the container never started"
        assert time.monotonic() < deadline, "the container never started"
        time.sleep(0.1)


def wait_until_running(engine: str, run_id: str) -> None:
    """Until the engine itself says the run's container runs.

    The payload may have written its file before podman has recorded the
    container as started; a SIGTERM in that window kills the client before
    podman can pass it on (it cannot signal a container it holds as not yet
    running), and the container runs on. A job script's stop command covers
    that window (see the next test); this test is about the client passing a
    signal on, which it does once the engine knows the container runs.
    """
    command = [engine, "ps", "--filter", f"label=shinobi.run={run_id}"]
    command += ["--filter", "status=running", "--format", "{{.Names}}"]
    deadline = time.monotonic() + 60
    while not subprocess.run(command, capture_output=True, text=True, timeout=60).stdout.strip():
        assert time.monotonic() < deadline, f"{engine} never said the container runs"
        time.sleep(0.1)


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_a_finished_job_leaves_no_container(engine: str, tmp_path: Path) -> None:
    job, run_id = rendered(engine, tmp_path, "echo done > ran.txt")
    done, oom = as_a_job(job, tmp_path)
    assert done.returncode == 0, done.stderr
    assert oom == "false"
    assert (tmp_path / "ran.txt").read_text() == "done\n"
    assert gone(engine, run_id) == []


def test_a_worker_killed_for_memory_is_told_though_the_step_exits_0(tmp_path: Path) -> None:
    """``tail`` holding a line of zeros is killed by the engine's --memory limit while
    its shell exits 0: with ``--rm`` the record went with the container, and the
    job ended "completed" on what the kill cut short."""
    script = "head -c 400000000 /dev/zero | tail > /dev/null; echo worker $?; exit 0"
    job, run_id = rendered("docker", tmp_path, script, resources=Resources(memory="64MiB"))
    done, oom = as_a_job(job, tmp_path)
    assert done.returncode == 0 and "worker 137" in done.stdout, done.stdout + done.stderr
    assert oom == "true"
    assert gone("docker", run_id) == []


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_a_cancelled_job_leaves_no_container(engine: str, tmp_path: Path) -> None:
    job, run_id = rendered(engine, tmp_path, "touch started; sleep 300")
    client = subprocess.Popen(job.argv, cwd=tmp_path, start_new_session=True)
    try:
        wait_until_started(client, tmp_path)
        wait_until_running(engine, run_id)
        client.send_signal(signal.SIGTERM)  # what scancel does to a job's processes
        client.wait(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
    assert job.stop is not None  # what the job's trap runs
    subprocess.run(job.stop, capture_output=True, timeout=120)
    assert gone(engine, run_id) == []


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_the_stop_command_ends_a_container_whose_client_was_killed(
    engine: str, tmp_path: Path
) -> None:
    """Slurm ending a job kills the client with SIGKILL once the job's shell is gone;
    the container its daemon owns ran on, unseen, until the job ran the stop command."""
    backend = live_backend(engine)
    run_id = f"rendered-{uuid.uuid4().hex[:8]}"
    invocation = Invocation(
        step="job",
        argv=("/bin/sh", "-c", "touch started; sleep 300"),
        cwd=str(tmp_path),
        image=image(engine),
        run_id=run_id,
    )
    job = backend.render_for_job(invocation)
    assert job.stop is not None
    client = subprocess.Popen(job.argv, cwd=tmp_path, start_new_session=True)
    try:
        wait_until_started(client, tmp_path)
        client.kill()
        client.wait(timeout=60)
        assert shinobi_containers_of(engine, run_id), "the container ended with its client"
        stopped = subprocess.run(job.stop, capture_output=True, text=True, timeout=120)
        assert stopped.returncode == 0, stopped.stderr
    finally:
        if client.poll() is None:
            client.kill()
    assert gone(engine, run_id) == []


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_a_read_only_input_made_after_rendering_stays_read_only(
    engine: str, tmp_path: Path
) -> None:
    """A compiled job is rendered before the job that makes its input has run."""
    area = tmp_path / "data"
    area.mkdir()
    area.chmod(0o777)
    made = area / "made.txt"
    uses = (
        PathUse(str(made), "input", "src", "file", writable=False),
        PathUse(str(area / "copy.txt"), "output", "out", "file"),
    )
    script = f"cp '{made}' '{area}/copy.txt'; echo HACK >> '{made}' || echo read-only"
    job, run_id = rendered(engine, tmp_path, script, uses)
    made.write_text("pristine\n")  # the earlier job ran
    made.chmod(0o666)
    done, _ = as_a_job(job, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "read-only" in done.stdout
    assert made.read_text() == "pristine\n"
    assert (area / "copy.txt").read_text() == "pristine\n"
    assert gone(engine, run_id) == []
