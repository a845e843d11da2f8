"""A path that passes symlinks in its parent directories, hop after hop, resolves in
the container as it does natively.

``work/s2 -> /scratch/s2`` and ``/scratch/s2/cur -> real``: ``s2/cur/x.txt`` was
invisible in every container. Only the link of a path's last component was
followed; the real directory was mounted at the spelling ``work/s2/cur``, but
that mount was dropped as covered by the working directory's, although in the
container the name leaves that mount through ``s2``, to a ``/scratch/s2/cur``
nothing made visible.

The plan is checked by resolving paths the way the container's kernel would,
against the mounts alone (:func:`in_container`), so the test says what must hold
rather than which mounts give it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend
from test_bind_mounts import CWD, FakeHost, inp, out

from shinobi.backends.base import Backend, Invocation, PathUse, RunControl
from shinobi_containers.mounts import Mount, covers, plan_mounts

#: work/s2 -> /scratch/s2, /scratch/s2/cur -> /scratch/s2/real: the audit's recipe.
TWO_HOPS = {"/work/s2": "/scratch/s2", "/scratch/s2/cur": "/scratch/s2/real"}


def in_container(path: str, mounts: tuple[Mount, ...], host: FakeHost) -> str | None:
    """The host path the container reaches at ``path`` given only ``mounts``, following
    the links it finds in them; None where it finds nothing. A directory no mount
    covers exists only as the engine's mount point (or a parent of one)."""
    rest = path.strip("/").split("/")
    done = ""
    on_host: str | None = None
    hops = 0
    while rest:
        spelled = f"{done}/{rest.pop(0)}"
        outer = [m for m in mounts if covers(m.target, spelled)]
        if not outer:
            if not any(covers(spelled, m.target) for m in mounts):
                return None
            done, on_host = spelled, None
            continue
        mount = max(outer, key=lambda m: len(m.target))
        on_host = mount.source + spelled[len(mount.target) :]
        target = host.readlink(on_host)
        if target is not None and hops < 40:
            hops += 1
            rest = [*target.strip("/").split("/"), *rest]
            done = ""
            continue
        if rest and not host.exists(on_host):
            return None
        done = spelled
    return None if on_host is None else host.realpath(on_host)


def test_a_file_behind_a_linked_directory_and_then_a_second_link_is_visible() -> None:
    host = FakeHost(["/scratch/s2/real/x.txt", CWD], links=TWO_HOPS)
    mounts = plan_mounts([inp("s2/cur/x.txt")], CWD, host=host)
    assert in_container("/work/s2/cur/x.txt", mounts, host) == "/scratch/s2/real/x.txt"


def test_an_output_behind_two_links_is_written_where_they_lead() -> None:
    host = FakeHost(["/scratch/s2/real", CWD], links=TWO_HOPS)
    mounts = plan_mounts([out("s2/cur/z.txt")], CWD, host=host)
    assert in_container("/work/s2/cur", mounts, host) == "/scratch/s2/real"
    assert all(not m.readonly for m in mounts)


def test_a_harvest_pattern_behind_two_links_is_written_where_they_lead() -> None:
    host = FakeHost(["/scratch/s2/real", CWD], links=TWO_HOPS)
    mounts = plan_mounts([out("s2/cur/*.fits", pattern=True)], CWD, host=host)
    assert in_container("/work/s2/cur", mounts, host) == "/scratch/s2/real"


def test_every_hop_of_a_longer_chain_through_parents_resolves() -> None:
    """/work/a -> /p/a, /p/a/b -> /q/b, /q/b/c -> /r/c, and the file itself a link on."""
    links = {
        "/work/a": "/p/a",
        "/p/a/b": "/q/b",
        "/q/b/c": "/r/c",
        "/r/c/f.txt": "/s/t/f.txt",
        "/s/t": "/u/v",
    }
    host = FakeHost(["/u/v/f.txt", "/p/a", "/q/b", "/r/c", CWD], links=links)
    mounts = plan_mounts([inp("/work/a/b/c/f.txt")], CWD, host=host)
    assert in_container("/work/a/b/c/f.txt", mounts, host) == "/u/v/f.txt"


def test_a_directory_input_behind_two_links_resolves_as_a_whole() -> None:
    host = FakeHost(["/scratch/s2/real/obs.ms/table.dat", CWD], links=TWO_HOPS)
    mounts = plan_mounts([inp("s2/cur/obs.ms", kind="dir")], CWD, host=host)
    seen = in_container("/work/s2/cur/obs.ms/table.dat", mounts, host)
    assert seen == "/scratch/s2/real/obs.ms/table.dat"


def test_the_single_hop_plans_stay_as_they_were() -> None:
    host = FakeHost(["/scratch/data/in.txt", "/home/u"], links={"/home/u/data": "/scratch/data"})
    mounts = plan_mounts([inp("/home/u/data/in.txt")], "/home/u", host=host)
    assert set(mounts) == {Mount("/home/u", "/home/u"), Mount("/scratch/data", "/scratch/data")}


# -- live: the audit's recipe, with a relative second link --------------------------------


@pytest.fixture(params=[e for e in ENGINES if e != "singularity"])
def backend(request: pytest.FixtureRequest) -> Backend:
    return live_backend(request.param)


def test_files_behind_two_links_are_read_and_written_in_the_container(
    backend: Backend, tmp_path: Path
) -> None:
    tmp_path.chmod(0o777)
    store = tmp_path / "scratch" / "s2"
    (store / "real").mkdir(parents=True)
    (store / "cur").symlink_to("real")  # relative, inside the target
    (store / "real" / "x.txt").write_text("hi\n")
    work = tmp_path / "work dir"
    work.mkdir()
    (work / "s2").symlink_to(store)
    invocation = Invocation(
        step="hops",
        argv=("/bin/sh", "-c", "cp s2/cur/x.txt y.txt && cp 'in put.txt' s2/cur/z.txt"),
        cwd=str(work),
        paths=(
            PathUse(str(work / "s2" / "cur" / "x.txt"), "input", "src", "file"),
            PathUse(str(work / "in put.txt"), "input", "src2", "file"),
            PathUse(str(work / "y.txt"), "output", "dst", "file"),
            PathUse(str(work / "s2" / "cur" / "z.txt"), "output", "dst2", "file"),
        ),
        image=image(backend.name),
        run_id="hops-live",
        stdout_path=str(tmp_path / "hops.out"),
        stderr_path=str(tmp_path / "hops.err"),
    )
    (work / "in put.txt").write_text("in\n")
    result = backend.run(invocation, RunControl(grace=2.0))
    assert result.returncode == 0, (tmp_path / "hops.err").read_text()
    assert (work / "y.txt").read_text() == "hi\n"
    assert (store / "real" / "z.txt").read_text() == "in\n"
    assert os.path.islink(store / "cur")  # the link itself is left as it was


def test_a_read_only_input_behind_a_linked_directory_cannot_be_written_by_that_name(
    backend: Backend, tmp_path: Path
) -> None:
    """``data -> /store/real`` outside the working directory, a ``writable: false`` input
    and an output both given as ``data/...``: the linked directory was mounted
    read-write at its name for the output, and the input was read-only only at its
    real path, so the tool appended to it through the name it was given."""
    tmp_path.chmod(0o777)
    real = tmp_path / "store" / "real"
    real.mkdir(parents=True)
    (real / "cal.txt").write_text("orig\n")
    data = tmp_path / "data"
    data.symlink_to(real)
    work = tmp_path / "work"
    work.mkdir()
    script = 'echo X >> "$1"; echo "append=$?" > "$2"'
    invocation = Invocation(
        step="ro",
        argv=("/bin/sh", "-c", script, "ro", str(data / "cal.txt"), str(data / "out.txt")),
        cwd=str(work),
        paths=(
            PathUse(str(data / "cal.txt"), "input", "src", "file", writable=False),
            PathUse(str(data / "out.txt"), "output", "dst", "file"),
        ),
        image=image(backend.name),
        run_id="ro-live",
        stdout_path=str(tmp_path / "ro.out"),
        stderr_path=str(tmp_path / "ro.err"),
    )
    result = backend.run(invocation, RunControl(grace=2.0))
    assert result.returncode == 0, (tmp_path / "ro.err").read_text()
    assert (real / "cal.txt").read_text() == "orig\n"
    assert (real / "out.txt").read_text() != "append=0\n"  # the write was refused
