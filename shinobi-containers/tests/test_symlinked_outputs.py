"""Outputs reached through a symlink land where the link points, on every engine.

A results directory linked to scratch space, or an output file kept as a link
to where products are stored, is written through the link. The link's target
must be mounted too: otherwise the tool's write fails, or (when the target's
directory happens to exist in the image, such as /tmp) it lands inside the
container and is lost with it while the step reports success.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend
from test_bind_mounts import CWD, FakeHost, out, plan, rw

from shinobi.backends.base import Backend, Invocation, PathUse, RunControl
from shinobi_containers.errors import MountRefused
from shinobi_containers.mounts import plan_mounts


def test_an_output_directory_that_is_a_symlink_mounts_its_target() -> None:
    host = FakeHost(["/scratch/results", CWD], links={"/work/results": "/scratch/results"})
    mounts = plan(host, out("/work/results", kind="dir"))
    assert rw("/scratch") in mounts


def test_an_output_file_that_is_a_dangling_symlink_mounts_the_targets_directory() -> None:
    host = FakeHost(["/keep", "/work/out"], links={"/work/out/final.txt": "/keep/final.txt"})
    host.existing.discard("/keep/final.txt")  # the link dangles: writing creates its target
    assert rw("/keep") in plan(host, out("/work/out/final.txt", kind="file"))


def test_an_output_linked_to_where_nothing_exists_is_refused() -> None:
    host = FakeHost(["/work/out"], links={"/work/out/final.txt": "/nowhere/final.txt"})
    host.existing -= {"/nowhere", "/nowhere/final.txt"}
    with pytest.raises(MountRefused, match="create /nowhere first"):
        plan_mounts([out("/work/out/final.txt", kind="file")], CWD, step="s", host=host)


@pytest.fixture(params=ENGINES)
def backend(request: pytest.FixtureRequest) -> Backend:
    return live_backend(request.param)


def test_outputs_written_through_symlinks_land_on_the_host(
    backend: Backend, tmp_path: Path
) -> None:
    tmp_path.chmod(0o777)
    store = tmp_path / "store"
    (store / "results").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "results").symlink_to(store / "results")
    (work / "final.txt").symlink_to(store / "final.txt")  # dangling until the tool writes
    invocation = Invocation(
        step="links",
        argv=("/bin/sh", "-c", "echo dir > results/prod.txt && echo file > final.txt"),
        cwd=str(work),
        paths=(
            PathUse(str(work / "results"), "output", "results", "dir"),
            PathUse(str(work / "final.txt"), "output", "final", "file"),
        ),
        image=image(backend.name),
        run_id="links-live",
        stdout_path=str(tmp_path / "links.out"),
        stderr_path=str(tmp_path / "links.err"),
    )
    result = backend.run(invocation, RunControl(grace=2.0))
    assert result.returncode == 0, (tmp_path / "links.err").read_text()
    assert (store / "results" / "prod.txt").read_text() == "dir\n"
    assert (store / "final.txt").read_text() == "file\n"
