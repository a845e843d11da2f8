"""What a step sees and may change, live on every engine.

Each test runs a real container through the backend with the paths a cab
would declare, and checks the host afterwards.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from live_engines import ENGINES, OCI_ENGINES, copied_through, image, live_backend

from shinobi.backends.base import Backend, BackendRun, Invocation, PathUse, RunControl
from shinobi_containers.errors import MountRefused

AWKWARD = "in 'single' \"double\" $(touch pwned) `tick` ; & dollar$HOME, comma: colon"


@pytest.fixture(params=ENGINES)
def backend(request: pytest.FixtureRequest) -> Backend:
    return live_backend(request.param)


@pytest.fixture
def area(tmp_path: Path) -> Path:
    """A directory every user can reach: root-squashed engines and test users alike."""
    tmp_path.chmod(0o777)
    return tmp_path


def run(
    backend: Backend, area: Path, script: str, *paths: PathUse, cwd: Path | None = None
) -> BackendRun:
    invocation = Invocation(
        step="paths",
        argv=("/bin/sh", "-c", script),
        cwd=str(cwd or area),
        paths=paths,
        image=image(backend.name),
        run_id="paths-live",
        stdout_path=str(area / "paths.out"),
        stderr_path=str(area / "paths.err"),
    )
    return backend.run(invocation, RunControl(grace=2.0))


def test_an_output_in_a_directory_that_does_not_exist_yet_lands_on_the_host(
    backend: Backend, area: Path
) -> None:
    data = area / "data"
    data.mkdir()
    target = data / "new" / "deeper" / "product.txt"
    script = f"mkdir -p '{target.parent}' && echo made > '{target}'"
    result = run(backend, area, script, PathUse(str(target), "output", "product", "file"), cwd=data)
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "made\n"
    assert (target.stat().st_uid, target.stat().st_gid) == (os.getuid(), os.getgid())


def test_a_directory_input_the_tool_creates_lands_on_the_host(backend: Backend, area: Path) -> None:
    """spwsplit(vis: MS, outdir: Directory) runs ``mkdir -p outdir``, as it may natively:
    one in the working directory, one in a directory that does not exist yet."""
    (area / "obs1.ms").mkdir()
    parts, elsewhere = area / "work" / "parts", area / "scratch" / "run2" / "parts"
    (area / "work").mkdir()
    (area / "scratch").mkdir()
    result = run(
        backend,
        area,
        f"mkdir -p parts/obs1-spw0.ms '{elsewhere}/obs1-spw0.ms'",
        PathUse(str(area / "obs1.ms"), "input", "vis", "dir"),
        PathUse("parts", "input", "outdir", "dir"),
        PathUse(str(elsewhere), "input", "other", "dir"),
        PathUse("parts/obs1-spw*.ms", "output", "parts", pattern=True),
        cwd=area / "work",
    )
    assert result.returncode == 0, result.stderr
    assert (parts / "obs1-spw0.ms").is_dir() and (elsewhere / "obs1-spw0.ms").is_dir()


@pytest.fixture
def image_running_as_4321() -> Iterator[Callable[[str], str]]:
    """Builds, per engine, a busybox image whose default user is 4321, so only --user
    makes a step's outputs ours; removes them afterwards."""
    built: list[tuple[str, str]] = []

    def build(engine: str) -> str:
        tag = f"shinobi-test/busybox-user4321:{engine}"
        subprocess.run(
            [engine, "build", "--network", "none", "-q", "-t", tag, "-"],
            input=f"FROM {image(engine)}\nUSER 4321:4321\n",
            text=True,
            check=True,
            capture_output=True,
            timeout=300,
        )
        built.append((engine, tag))
        return tag

    yield build
    for engine, tag in built:
        subprocess.run([engine, "rmi", "-f", tag], capture_output=True, check=False, timeout=120)


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_docker_and_podman_run_as_the_host_user_not_the_images(
    engine: str, area: Path, image_running_as_4321: Callable[[str], str]
) -> None:
    backend = live_backend(engine)
    tag = image_running_as_4321(engine)
    target = area / "out" / "owned.txt"
    invocation = Invocation(
        step="owner",
        argv=("/bin/sh", "-c", f"mkdir -p '{target.parent}' && id -u > '{target}'"),
        cwd=str(area),
        paths=(PathUse(str(target), "output", "owned", "file"),),
        image=tag,
    )
    result = backend.run(invocation, RunControl(grace=2.0))
    assert result.returncode == 0, result.stderr
    assert target.read_text().strip() == str(os.getuid())
    assert target.stat().st_uid == os.getuid()


def test_a_read_only_input_cannot_be_changed(backend: Backend, area: Path) -> None:
    ref = area / "ref"
    ref.mkdir()
    catalogue = ref / "catalogue.txt"
    catalogue.write_text("original\n")
    catalogue.chmod(0o666)
    script = f"echo tampered > '{catalogue}' && exit 0; echo write-failed >&2; exit 9"
    result = run(
        backend, area, script, PathUse(str(catalogue), "input", "cat", "file", writable=False)
    )
    assert result.returncode == 9, (result.returncode, result.stderr)
    assert "write-failed" in result.stderr
    assert catalogue.read_text() == "original\n"


def test_a_read_only_input_beside_an_output_stays_read_only_while_the_output_lands(
    backend: Backend, area: Path
) -> None:
    shared = area / "shared"
    shared.mkdir()
    catalogue = shared / "catalogue.txt"
    catalogue.write_text("original\n")
    catalogue.chmod(0o666)
    product = shared / "product.txt"
    script = (
        f"echo made > '{product}' || exit 8;"
        f" echo tampered > '{catalogue}' && exit 0; rm -f '{catalogue}' && exit 0; exit 9"
    )
    result = run(
        backend,
        area,
        script,
        PathUse(str(catalogue), "input", "cat", "file", writable=False),
        PathUse(str(product), "output", "product", "file"),
    )
    assert result.returncode == 9, (result.returncode, result.stderr)
    assert product.read_text() == "made\n"
    assert catalogue.read_text() == "original\n"


def test_a_read_only_directory_stays_read_only_with_a_product_written_beside_it(
    backend: Backend, area: Path
) -> None:
    sky = area / "obs.ms"
    sky.mkdir()
    table = sky / "table.f0"
    table.write_text("visibilities\n")
    table.chmod(0o666)
    sky.chmod(0o777)
    image_out = area / "image.fits"
    script = (
        f"echo pixels > '{image_out}' || exit 8;"
        f" touch '{sky}/intruder' && exit 0; echo x >> '{table}' && exit 0; exit 9"
    )
    result = run(
        backend,
        area,
        script,
        PathUse(str(sky), "input", "ms", "dir", writable=False),
        PathUse(str(image_out), "output", "image", "file"),
    )
    assert result.returncode == 9, (result.returncode, result.stderr)
    assert image_out.read_text() == "pixels\n"
    assert table.read_text() == "visibilities\n" and not (sky / "intruder").exists()


def test_a_host_path_the_step_did_not_declare_is_not_there(backend: Backend, area: Path) -> None:
    """A step sees its working directory and what it declared, nothing beside them.
    apptainer shares the host's /tmp, $HOME and working directory unless told not
    to (``--contain``): without it a sibling of the working directory under /tmp
    was in plain view, and a tool could read (or write) what no cab declared."""
    (area / "declared").mkdir()
    declared = area / "declared" / "in.txt"
    declared.write_text("declared\n")
    (area / "beside").mkdir()
    undeclared = area / "beside" / "secret.txt"
    undeclared.write_text("undeclared\n")
    work = area / "work"
    work.mkdir()
    script = (
        f"cat '{declared}' || exit 8;"
        f" for seen in '{area / 'beside'}' '{undeclared}'; do"
        ' [ -e "$seen" ] && echo "$seen is there" >&2 && exit 9; done; exit 0'
    )
    result = run(
        backend,
        area,
        script,
        PathUse(str(declared), "input", "data", "file", writable=False),
        cwd=work,
    )
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert result.stdout == "declared\n"


def test_writing_inside_a_read_only_input_is_refused_before_running(
    backend: Backend, area: Path
) -> None:
    sky = area / "obs.ms"
    sky.mkdir()
    marker = area / "ran"
    with pytest.raises(MountRefused) as info:
        run(
            backend,
            area,
            f"touch '{marker}'",
            PathUse(str(sky), "input", "ms", "dir", writable=False),
            PathUse(str(sky / "FLAG"), "output", "flags", "file"),
        )
    assert "writable: false" in str(info.value) and "'flags'" in str(info.value)
    assert not marker.exists()


def test_an_output_with_no_existing_ancestor_is_refused_before_running(
    backend: Backend, area: Path
) -> None:
    marker = area / "ran"
    missing = f"/shinobi-no-such-dir-{os.getpid()}/out.txt"
    with pytest.raises(MountRefused, match="no existing parent directory"):
        run(backend, area, f"touch '{marker}'", PathUse(missing, "output", "out", "file"))
    assert not marker.exists()


def test_awkward_paths_survive_mounts_and_argv(backend: Backend, area: Path) -> None:
    inputs = area / AWKWARD
    inputs.mkdir()
    source = inputs / f"{AWKWARD}.txt"
    source.write_text("payload\n")
    target = area / f"out {AWKWARD}" / "result $(x).txt"
    copied_through(backend, "awkward", source, target, area)
    assert not (area / "pwned").exists() and not Path("pwned").exists()


def test_an_input_reached_through_a_symlink_is_readable(backend: Backend, area: Path) -> None:
    store = area / "store"
    store.mkdir()
    (store / "real.txt").write_text("through the link\n")
    links = area / "links"
    links.mkdir()
    (links / "data.txt").symlink_to(store / "real.txt")
    work = area / "work"
    work.mkdir()
    result = run(
        backend,
        area,
        f"cat '{links / 'data.txt'}'",
        PathUse(str(links / "data.txt"), "input", "data", "file"),
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "through the link\n"


def test_a_link_through_another_link_and_dotdot_after_a_link_reach_the_host(
    backend: Backend, area: Path
) -> None:
    """current -> 2026-11 inside a link's target; an output at ``link/..``."""
    (area / "archive" / "2026-11").mkdir(parents=True)
    (area / "archive" / "2026-11" / "obs.txt").write_text("archived\n")
    (area / "archive" / "current").symlink_to("2026-11")
    work = area / "work"
    work.mkdir()
    (work / "cur.txt").symlink_to(area / "archive" / "current" / "obs.txt")
    (work / "ext").symlink_to(area / "archive" / "2026-11")
    result = run(
        backend,
        area,
        "cat cur.txt > ext/../copy.txt",
        PathUse("cur.txt", "input", "data", "file"),
        PathUse("ext/../copy.txt", "output", "copy", "file"),
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    assert (area / "archive" / "copy.txt").read_text() == "archived\n"


def test_an_input_behind_a_linked_directory_outside_the_working_directory_is_readable(
    backend: Backend, area: Path
) -> None:
    """``links/lnk -> real``, with ``links`` mounted by nothing else. The links above
    sit in the working directory's mount, which shows their names anyway; here only
    a mount of ``real`` under the name ``links/lnk`` lets the step open the path it
    was given, and without it cat failed with "No such file or directory"."""
    (area / "real").mkdir()
    (area / "real" / "in.txt").write_text("behind the link\n")
    (area / "links").mkdir()
    (area / "links" / "lnk").symlink_to(area / "real")
    work = area / "work"
    work.mkdir()
    given = area / "links" / "lnk" / "in.txt"
    result = run(
        backend,
        area,
        f"cat '{given}'",
        PathUse(str(given), "input", "data", "file", writable=False),
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "behind the link\n"


def test_a_read_only_input_that_is_a_link_is_not_replaced_quietly(
    backend: Backend, area: Path
) -> None:
    """The read-only mount keeps the target; replacing the link by name fails the step."""
    (area / "store").mkdir()
    kept = area / "store" / "cal.txt"
    kept.write_text("orig\n")
    work = area / "work"
    work.mkdir()
    work.chmod(0o777)
    (work / "cal.txt").symlink_to(kept)
    result = run(
        backend,
        area,
        "cat cal.txt > new && mv -f new cal.txt",
        PathUse("cal.txt", "input", "cal", "file", writable=False),
        cwd=work,
    )
    assert result.returncode != 0
    assert result.reason is not None and "the tool replaced input 'cal'" in result.reason
    assert kept.read_text() == "orig\n"


def test_a_declared_environment_value_arrives_exactly_as_written(
    backend: Backend, area: Path
) -> None:
    value = "$(echo pwned) `id -u` $HOME a\\b x\"y it's"
    invocation = Invocation(
        step="env",
        argv=("/bin/sh", "-c", f"printf '%s' \"$V\" > '{area}/v.txt'"),
        cwd=str(area),
        paths=(PathUse(str(area / "v.txt"), "output", "v", "file"),),
        image=image(backend.name),
        env={"V": value},
        run_id="env-live",
        stdout_path=str(area / "env.out"),
        stderr_path=str(area / "env.err"),
    )
    result = backend.run(invocation, RunControl(grace=2.0))
    assert result.returncode == 0, result.stderr
    assert (area / "v.txt").read_text() == value
