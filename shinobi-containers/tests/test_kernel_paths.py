"""Paths under /proc, /sys and /dev never become mounts of the host's kernel filesystems.

An output such as ``/proc/out.txt`` (or ``/sys/x``, ``/dev/x``) has the tree
itself as its nearest existing parent, so the host's /proc or /sys was
bind-mounted read-write over the container's own: the step could write the
host's kernel settings. Such a path is refused before the run, naming the
step and the field. /dev/shm stays usable, and a device every container has
itself (``/dev/null`` for a log to discard) needs, and gets, no mount.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from live_engines import image, live_backend
from test_bind_mounts import CWD, FakeHost, inp, out, plan, rw
from test_cli_live import refused_target, run_pipe, write_project

from shinobi.backends.base import PathUse
from shinobi_containers.mounts import MountRefused, plan_mounts

HOST = FakeHost(["/proc/sys/vm", "/sys/kernel", "/dev/shm", "/dev/null", CWD])


@pytest.mark.parametrize(
    ("use", "tree"),
    [
        (out("/proc/out.txt", field="dst"), "/proc"),
        (out("/proc/sys/vm/new/out.txt", field="dst"), "/proc"),
        (out("/sys/kernel/x", field="dst"), "/sys"),
        (out("/dev/products/x.fits", field="dst"), "/dev"),
        (PathUse("/dev/*.fits", "output", "dst", pattern=True), "/dev"),
        (inp("/proc/sys/vm", field="dst", kind="dir"), "/proc"),
    ],
)
def test_a_path_in_a_kernel_filesystem_is_refused_naming_step_and_field(
    use: PathUse, tree: str
) -> None:
    with pytest.raises(MountRefused) as refused:
        plan_mounts([use], CWD, step="image", host=HOST)
    said = str(refused.value)
    assert said.startswith("step 'image': ") and "'dst'" in said and f"under {tree}" in said
    assert "\n" not in said


@pytest.mark.parametrize(("cwd", "tree"), [("/dev", "/dev"), ("/proc/sys/vm", "/proc")])
def test_a_working_directory_in_a_kernel_filesystem_is_refused(cwd: str, tree: str) -> None:
    """ninja's own directory is mounted for the step: from /dev that laid the host's
    /dev, read-write, over the container's (a later audit)."""
    with pytest.raises(MountRefused) as refused:
        plan_mounts([], cwd, step="image", host=HOST)
    said = str(refused.value)
    assert f"the working directory {cwd} is under {tree}" in said
    assert "run ninja from elsewhere" in said and "\n" not in said


def test_a_working_directory_in_shared_memory_is_mounted() -> None:
    assert plan_mounts([], "/dev/shm", step="image", host=HOST)


def test_shared_memory_stays_usable() -> None:
    assert rw("/dev/shm") in plan(HOST, out("/dev/shm/run1/x.fits", kind="file"))


@pytest.mark.parametrize("path", ["/dev/null", "/dev/stdout"])
def test_a_device_the_container_has_itself_gets_no_mount(path: str) -> None:
    assert plan(HOST, out(path, kind="file")) == {rw(CWD)}


def test_an_output_linked_to_dev_null_gets_no_mount_of_dev() -> None:
    host = FakeHost(["/dev/null", CWD], links={f"{CWD}/log.txt": "/dev/null"})
    assert plan(host, out(f"{CWD}/log.txt", kind="file")) == {rw(CWD)}


def test_an_output_under_proc_is_refused_before_the_run(tmp_path: Path) -> None:
    """Live, through the CLI: one line, exit 2, and no step has run."""
    said = refused_target(tmp_path, f"/proc/shinobi-{os.getpid()}/t.txt")
    assert "step 'second'" in said and "'dst'" in said and "under /proc" in said


def test_shared_memory_is_refused_where_the_engine_keeps_its_own() -> None:
    """apptainer --contain skips the bind of /dev/shm: the output was lost, exit 0."""
    with pytest.raises(MountRefused) as refused:
        plan_mounts([out("/dev/shm/run1/x.fits", kind="file")], CWD, host=HOST, own_shm=True)
    said = str(refused.value)
    assert "is under /dev/shm, and this engine gives the container a /dev/shm of its own" in said
    assert "use a path elsewhere, or run this step on docker, podman or native" in said


@pytest.mark.parametrize("engine", ["apptainer", "singularity"])
def test_an_output_in_shared_memory_is_refused_live_on_apptainer(
    tmp_path: Path, engine: str
) -> None:
    live_backend(engine)
    assert image(engine)
    write_project(tmp_path, engine)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "source.txt").write_text("x")
    target = f"/dev/shm/shinobi-{os.getpid()}/t.txt"
    done = run_pipe(tmp_path, engine, "in/source.txt", "mid/m.txt", target)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "a /dev/shm of its own" in done.stderr
    assert not (tmp_path / "mid").exists(), "the first step ran although the run was refused"
