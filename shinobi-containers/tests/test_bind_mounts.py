"""The mount rules, on a described host (and once on the real filesystem)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pytest

from shinobi.backends.base import PathUse
from shinobi_containers.mounts import LOCAL_HOST, Mount, MountRefused, covers, plan_mounts


class FakeHost:
    """Existing paths and symlinks (link path -> absolute target), nothing else."""

    def __init__(self, existing: Iterable[str], links: dict[str, str] | None = None) -> None:
        self.links = dict(links or {})
        self.existing = {"/"}
        for path in [*existing, *self.links.values()]:
            while path != "/":
                self.existing.add(path)
                path = os.path.dirname(path)

    def realpath(self, path: str, depth: int = 0) -> str:
        parts = path.strip("/").split("/")
        resolved = ""
        for part in parts:
            resolved = f"{resolved}/{part}"
            if resolved in self.links and depth < 40:  # a target may pass through links too
                resolved = self.realpath(self.links[resolved], depth + 1)
        return resolved or "/"

    def exists(self, path: str) -> bool:
        return self.realpath(path) in self.existing

    def readlink(self, path: str) -> str | None:
        return self.links.get(path)


def rw(path: str, source: str | None = None) -> Mount:
    return Mount(source or path, path, readonly=False)


def ro(path: str, source: str | None = None) -> Mount:
    return Mount(source or path, path, readonly=True)


def inp(path: str, field: str = "f", **kw: object) -> PathUse:
    return PathUse(path, "input", field, **kw)  # type: ignore[arg-type]


def out(path: str, field: str = "o", **kw: object) -> PathUse:
    return PathUse(path, "output", field, **kw)  # type: ignore[arg-type]


CWD = "/work"


def plan(host: FakeHost, *paths: PathUse, cwd: str = CWD) -> set[Mount]:
    return set(plan_mounts(paths, cwd, step="s", host=host))


# -- what each path contributes ---------------------------------------------------


def test_an_input_file_contributes_its_parent_directory() -> None:
    host = FakeHost(["/data/in.txt", CWD])
    assert plan(host, inp("/data/in.txt", kind="file")) == {rw("/data"), rw(CWD)}


def test_a_directory_input_contributes_itself() -> None:
    host = FakeHost(["/data/obs.ms/table.dat", CWD])
    assert plan(host, inp("/data/obs.ms", kind="dir")) == {rw("/data/obs.ms"), rw(CWD)}


def test_an_input_of_unknown_kind_contributes_its_parent() -> None:
    host = FakeHost(["/data/thing", CWD])
    assert plan(host, inp("/data/thing", kind="any")) == {rw("/data"), rw(CWD)}


def test_an_output_contributes_its_directory_read_write() -> None:
    host = FakeHost(["/results", CWD])
    assert plan(host, out("/results/img.fits", kind="file")) == {rw("/results"), rw(CWD)}


def test_an_output_directory_contributes_its_parent_so_the_tool_can_create_it() -> None:
    host = FakeHost(["/results", CWD])
    assert plan(host, out("/results/new.ms", kind="dir")) == {rw("/results"), rw(CWD)}


def test_a_harvest_pattern_contributes_the_directory_it_globs_in() -> None:
    host = FakeHost(["/results/run1", CWD])
    assert plan(host, out("/results/run1/img-*.fits", pattern=True)) == {
        rw("/results/run1"),
        rw(CWD),
    }
    assert plan(host, out("/results/*/img.fits", pattern=True)) == {rw("/results"), rw(CWD)}


def test_a_harvest_pattern_globbing_a_parent_mounts_where_its_glob_starts() -> None:
    """``/results/*/fits/img.fits`` writes under any directory of /results: the
    directories after the glob are no directory of their own (/results/fits,
    which happens to exist, would have shown none of what the tool writes)."""
    host = FakeHost(["/results/run1/fits", "/results/fits", CWD])
    assert plan(host, out("/results/*/fits/img.fits", pattern=True)) == {rw("/results"), rw(CWD)}


def test_relative_paths_are_taken_against_the_working_directory() -> None:
    host = FakeHost(["/work/sub/in.txt", "/elsewhere"])
    mounts = plan(host, inp("sub/in.txt"), out("../elsewhere/out.txt"))
    assert mounts == {rw(CWD), rw("/elsewhere")}


def test_the_working_directory_is_always_visible() -> None:
    host = FakeHost(["/somewhere"])
    assert plan(host, cwd="/somewhere") == {rw("/somewhere")}


def test_the_root_as_working_directory_mounts_nothing() -> None:
    assert plan(FakeHost([]), cwd="/") == set()


# -- directories that do not exist yet -------------------------------------------------


def test_a_missing_output_directory_contributes_its_nearest_existing_ancestor() -> None:
    host = FakeHost(["/scratch", CWD])
    mounts = plan(host, out("/scratch/run/deep/out.txt", kind="file"))
    assert mounts == {rw("/scratch"), rw(CWD)}


def test_an_output_with_no_existing_ancestor_but_the_root_is_refused() -> None:
    host = FakeHost([CWD])
    with pytest.raises(MountRefused) as info:
        plan(host, out("/nowhere/at/all.txt", field="image"))
    message = str(info.value)
    assert "'image'" in message and "/nowhere/at/all.txt" in message
    assert "create /nowhere" in message and "\n" not in message


def test_a_pattern_with_no_existing_ancestor_is_refused() -> None:
    with pytest.raises(MountRefused, match="harvest pattern 'o'"):
        plan(FakeHost([CWD]), out("/nowhere/*.fits", pattern=True))


def test_an_output_directly_in_the_root_is_not_told_to_create_the_root() -> None:
    """It said "has no existing parent directory but / to mount; create /o.txt first"."""
    with pytest.raises(MountRefused) as info:
        plan(FakeHost([CWD]), out("/o.txt"))
    said = str(info.value)
    assert "sits directly in /" in said and "write it in a directory" in said
    assert "create" not in said


def test_an_input_directly_in_the_root_is_refused() -> None:
    with pytest.raises(MountRefused, match=r"sits directly in /.*move it"):
        plan(FakeHost(["/top.txt", CWD]), inp("/top.txt", kind="file"))


# -- read-only inputs -----------------------------------------------------------------------


def test_a_read_only_input_is_mounted_read_only() -> None:
    host = FakeHost(["/ref/cat.txt", CWD])
    assert plan(host, inp("/ref/cat.txt", kind="file", writable=False)) == {
        ro("/ref"),
        rw(CWD),
    }


def test_a_read_only_directory_input_is_mounted_read_only_at_itself() -> None:
    host = FakeHost(["/ref/sky.ms", CWD])
    assert plan(host, inp("/ref/sky.ms", kind="dir", writable=False)) == {
        ro("/ref/sky.ms"),
        rw(CWD),
    }


def test_a_read_only_input_beside_an_output_is_reasserted_at_its_own_path() -> None:
    host = FakeHost(["/d/cat.txt", CWD])
    mounts = plan(host, inp("/d/cat.txt", kind="file", writable=False), out("/d/new.txt"))
    assert mounts == {rw("/d"), ro("/d/cat.txt"), rw(CWD)}


def test_a_read_only_input_an_earlier_step_makes_is_protected_when_planned_ahead() -> None:
    """A compiled job (or a dry run) is planned before the file exists; afterok
    guarantees it will, so the read-only mount is planned all the same."""
    host = FakeHost(["/d", CWD])  # /d/made.txt is not there yet
    uses = [inp("/d/made.txt", kind="file", writable=False), out("/d/copy.txt")]
    # run now, it cannot be mounted, and the writable /d let the tool create it
    with pytest.raises(MountRefused, match=r"input 'f' \(/d/made.txt\) is marked writable: false"):
        plan_mounts(uses, CWD, host=host)
    ahead = set(plan_mounts(uses, CWD, host=host, ahead=True))
    assert ahead == {rw("/d"), ro("/d/made.txt"), rw(CWD)}


def test_a_read_only_input_beside_another_input_is_reasserted() -> None:
    host = FakeHost(["/d/cat.txt", "/d/other.txt", CWD])
    mounts = plan(
        host, inp("/d/cat.txt", kind="file", writable=False), inp("/d/other.txt", field="g")
    )
    assert mounts == {rw("/d"), ro("/d/cat.txt"), rw(CWD)}


def test_a_read_only_input_inside_the_working_directory_is_reasserted() -> None:
    host = FakeHost(["/work/inputs/cat.txt"])
    mounts = plan(host, inp("/work/inputs/cat.txt", kind="file", writable=False))
    assert mounts == {rw(CWD), ro("/work/inputs/cat.txt")}


def test_a_read_only_directory_with_an_output_beside_it_nests() -> None:
    host = FakeHost(["/d/sky.ms", CWD])
    mounts = plan(host, inp("/d/sky.ms", kind="dir", writable=False), out("/d/image.fits"))
    assert mounts == {rw("/d"), ro("/d/sky.ms"), rw(CWD)}
    ordered = plan_mounts(
        [inp("/d/sky.ms", kind="dir", writable=False), out("/d/image.fits")],
        CWD,
        host=host,
    )
    assert ordered.index(rw("/d")) < ordered.index(ro("/d/sky.ms"))


def test_an_output_under_a_read_only_mount_nests_read_write_inside_it() -> None:
    host = FakeHost(["/d/cat.txt", "/d/products", CWD])
    mounts = plan(host, inp("/d/cat.txt", writable=False), out("/d/products/x.fits"))
    assert mounts == {ro("/d"), rw("/d/products"), rw(CWD)}


def test_a_plain_input_inside_a_read_only_directory_opens_no_writable_hole() -> None:
    host = FakeHost(["/d/sky.ms/sub/table.f0", CWD])
    mounts = plan(
        host,
        inp("/d/sky.ms", kind="dir", writable=False),
        inp("/d/sky.ms/sub/table.f0", field="g"),
    )
    assert mounts == {ro("/d/sky.ms"), rw(CWD)}


def test_a_working_directory_inside_a_read_only_directory_stays_read_only() -> None:
    host = FakeHost(["/d/sky.ms/sub"])
    mounts = plan(host, inp("/d/sky.ms", kind="dir", writable=False), cwd="/d/sky.ms/sub")
    assert mounts == {ro("/d/sky.ms")}


# -- refusals -------------------------------------------------------------------------------


def test_an_output_inside_a_read_only_directory_is_refused() -> None:
    host = FakeHost(["/d/sky.ms", CWD])
    with pytest.raises(MountRefused) as info:
        plan(
            host,
            inp("/d/sky.ms", field="ms", kind="dir", writable=False),
            out("/d/sky.ms/FLAG.dat", field="flags"),
        )
    message = str(info.value)
    assert message.startswith("step 's': output 'flags' (/d/sky.ms/FLAG.dat)")
    assert "'ms'" in message and "writable: false" in message and "\n" not in message


def test_an_output_at_a_read_only_input_path_is_refused() -> None:
    host = FakeHost(["/d/cat.txt", CWD])
    with pytest.raises(MountRefused, match="writable: false"):
        plan(host, inp("/d/cat.txt", writable=False), out("/d/cat.txt"))


def test_a_harvest_pattern_inside_a_read_only_directory_is_refused() -> None:
    host = FakeHost(["/d/sky.ms", CWD])
    with pytest.raises(MountRefused, match="harvest pattern"):
        plan(
            host, inp("/d/sky.ms", kind="dir", writable=False), out("/d/sky.ms/*.log", pattern=True)
        )


def test_a_mutable_input_inside_a_read_only_directory_is_refused() -> None:
    host = FakeHost(["/d/sky.ms/model.ms", CWD])
    with pytest.raises(MountRefused, match="input 'g'"):
        plan(
            host,
            inp("/d/sky.ms", kind="dir", writable=False),
            inp("/d/sky.ms/model.ms", field="g", kind="dir", mutable=True),
        )


def test_an_input_both_mutable_and_read_only_is_refused() -> None:
    host = FakeHost(["/d/sky.ms", CWD])
    with pytest.raises(MountRefused, match="both mutable and writable: false"):
        plan(host, inp("/d/sky.ms", kind="dir", writable=False, mutable=True))


def test_an_output_beside_but_not_inside_a_read_only_file_is_allowed() -> None:
    host = FakeHost(["/d/cat.txt", CWD])
    assert ro("/d/cat.txt") in plan(host, inp("/d/cat.txt", writable=False), out("/d/cat.txt.bak"))


# -- collapsing -----------------------------------------------------------------------------


def test_mounts_inside_a_mount_of_the_same_mode_are_dropped() -> None:
    host = FakeHost(["/p/a/in.txt", "/p/b/c", "/p/x.txt"])
    mounts = plan(
        host,
        inp("/p/a/in.txt"),
        out("/p/b/c/out.txt", field="o1"),
        inp("/p/x.txt", field="g"),
        cwd="/p",
    )
    assert mounts == {rw("/p")}


def test_read_only_mounts_inside_a_read_only_mount_are_dropped() -> None:
    host = FakeHost(["/ref/a.txt", "/ref/sub/b.txt", CWD])
    mounts = plan(
        host, inp("/ref/a.txt", writable=False), inp("/ref/sub/b.txt", "g", writable=False)
    )
    assert mounts == {ro("/ref"), rw(CWD)}


def test_a_directory_wanted_both_ways_is_mounted_read_write() -> None:
    host = FakeHost(["/d/a.txt", "/d/b.txt", CWD])
    mounts = plan(host, inp("/d/a.txt", writable=False), out("/d/b.txt"))
    assert rw("/d") in mounts and ro("/d") not in mounts


def test_parents_come_before_the_mounts_nested_in_them() -> None:
    host = FakeHost(["/d/products", "/d/cat.txt", "/e/f/g", CWD])
    ordered = plan_mounts(
        [inp("/d/cat.txt", writable=False), out("/d/products/x"), inp("/e/f/g/h")],
        CWD,
        host=host,
    )
    targets = [m.target for m in ordered]
    for i, outer in enumerate(targets):
        for inner in targets[:i]:
            assert not covers(outer, inner) or outer == inner, targets


def test_covers_compares_whole_components() -> None:
    assert covers("/a", "/a/b") and covers("/a", "/a") and covers("/", "/x")
    assert not covers("/a", "/ab") and not covers("/a/b", "/a")


# -- symlinks ---------------------------------------------------------------------------


def test_a_symlinked_input_makes_its_target_visible_too() -> None:
    host = FakeHost(["/store/real.txt", "/d", CWD], links={"/d/link.txt": "/store/real.txt"})
    assert plan(host, inp("/d/link.txt")) == {rw("/d"), rw("/store"), rw(CWD)}


def test_a_link_whose_target_is_reached_through_another_link_mounts_each_hop() -> None:
    """cur.txt -> /archive/current/obs.txt, current -> 2026-11: the container needs
    /archive/current by that name, not only the real directory."""
    host = FakeHost(
        ["/archive/2026-11/obs.txt", "/d", CWD],
        links={"/d/cur.txt": "/archive/current/obs.txt", "/archive/current": "/archive/2026-11"},
    )
    mounts = plan(host, inp("/d/cur.txt"))
    assert rw("/archive/current", source="/archive/2026-11") in mounts
    assert rw("/archive/2026-11") in mounts


def test_dotdot_after_a_link_is_read_as_the_kernel_reads_it() -> None:
    """``ext/..`` is the parent of where ``ext`` points: an output there must reach the host."""
    host = FakeHost(["/outside/deep", CWD], links={"/work/ext": "/outside/deep"})
    mounts = plan(host, out("ext/../z.txt"))
    assert rw("/outside") in mounts


@pytest.mark.parametrize("role", ["output", "input"])
def test_dotdot_after_a_link_the_container_cannot_see_is_refused(role: str) -> None:
    """``/x/other/data/../out.txt`` with ``data -> /x/store/obs``: ``/x/store`` was
    mounted, but ``/x/other`` was not, so in the container the path named a folder
    the tool made there: the output was lost with the container, and the step said ok."""
    host = FakeHost(
        ["/x/store/obs/cal.txt", "/x/other", CWD], links={"/x/other/data": "/x/store/obs"}
    )
    use = (out if role == "output" else inp)("/x/other/data/../out.txt")
    with pytest.raises(MountRefused) as info:
        plan(host, use)
    said = str(info.value)
    assert said.startswith(f"step 's': {role} ")
    assert (
        "goes up out of the link /x/other/data ('..' after it), which is not in the container"
        in said
    )
    assert said.endswith("give the path as this host reads it, /x/store/out.txt")


def test_the_last_dotdot_of_a_path_is_read_through_the_links_before_it(tmp_path: Path) -> None:
    """``sub/../ext/../z.txt``: the kernel reads each ``..`` where it stands, so the
    second is the parent of where ``ext`` points; reading only the first one through
    the links left ``ext/..`` to the text, and the output landed in the working
    directory's mount, not on the host where the tool wrote it."""
    root = Path(os.path.realpath(tmp_path))
    (root / "work" / "sub").mkdir(parents=True)
    (root / "outside" / "deep").mkdir(parents=True)
    (root / "work" / "ext").symlink_to(root / "outside" / "deep")
    mounts = plan_mounts([out("sub/../ext/../z.txt")], str(root / "work"), host=LOCAL_HOST)
    assert rw(str(root / "outside")) in mounts


def test_a_read_only_symlinked_input_protects_its_target() -> None:
    host = FakeHost(["/store/real.txt", "/d", CWD], links={"/d/link.txt": "/store/real.txt"})
    mounts = plan(host, inp("/d/link.txt", writable=False), out("/store/product.txt"))
    assert ro("/store/real.txt") in mounts and rw("/store") in mounts


def test_a_path_through_a_symlinked_directory_is_mounted_at_its_real_path_and_its_spelling() -> (
    None
):
    host = FakeHost(["/scratch/u/proj"], links={"/home/u/proj": "/scratch/u/proj"})
    mounts = plan(host, cwd="/home/u/proj")
    assert mounts == {rw("/scratch/u/proj"), rw("/home/u/proj", source="/scratch/u/proj")}


def test_a_spelling_already_visible_through_a_covering_mount_is_not_mounted_again() -> None:
    host = FakeHost(["/scratch/data/in.txt", "/home/u"], links={"/home/u/data": "/scratch/data"})
    mounts = plan(host, inp("/home/u/data/in.txt"), cwd="/home/u")
    assert mounts == {rw("/home/u"), rw("/scratch/data")}


def test_an_output_through_a_symlink_into_a_read_only_directory_is_refused() -> None:
    host = FakeHost(["/ref/sky.ms", CWD], links={"/work/alias": "/ref/sky.ms"})
    with pytest.raises(MountRefused, match="writable: false"):
        plan(host, inp("/ref/sky.ms", kind="dir", writable=False), out("/work/alias/x.dat"))


# -- the real filesystem ---------------------------------------------------------------


def test_on_the_real_filesystem(tmp_path: Path) -> None:
    real = tmp_path / "real dir"
    (real / "in").mkdir(parents=True)
    (real / "in" / "cat.txt").write_text("x")
    link = tmp_path / "link"
    link.symlink_to(real)
    work = tmp_path / "work"
    work.mkdir()
    mounts = plan_mounts(
        [
            PathUse(str(link / "in" / "cat.txt"), "input", "cat", "file", writable=False),
            PathUse(str(link / "in" / "new" / "out.txt"), "output", "out", "file"),
        ],
        str(work),
        host=LOCAL_HOST,
    )
    assert set(mounts) == {
        rw(str(work)),
        rw(str(real / "in")),
        rw(str(link / "in"), source=str(real / "in")),
        ro(str(real / "in" / "cat.txt")),
        # the name the tool is given, in the read-write mount of the link's spelling:
        # without it the input was writable there
        ro(str(link / "in" / "cat.txt"), source=str(real / "in" / "cat.txt")),
    }


def test_a_directory_input_the_tool_creates_is_made_in_the_working_directory() -> None:
    """spwsplit(outdir: Directory) runs ``mkdir -p outdir``: natively that works, so the
    container gets the directory it is made in, and a dry run plans the same."""
    host = FakeHost([CWD])
    uses = [
        inp(f"{CWD}/parts", "outdir", kind="dir"),
        out(f"{CWD}/parts/obs1-spw*.ms", "parts", pattern=True),
    ]
    now = plan_mounts(uses, CWD, host=host)
    assert set(now) == {rw(CWD)}
    assert plan_mounts(uses, CWD, host=host, ahead=True) == now


def test_a_missing_input_mounts_its_nearest_existing_ancestor_as_an_output_does() -> None:
    host = FakeHost(["/scratch", CWD])  # /scratch/run2 does not exist: the tool makes it
    made = inp("/scratch/run2/parts", "outdir", kind="dir")
    now = plan_mounts([made], CWD, host=host)
    assert set(now) == {rw("/scratch"), rw(CWD)}
    assert plan_mounts([made], CWD, host=host, ahead=True) == now


def test_a_missing_input_past_a_link_in_a_link_is_mounted_under_each_name() -> None:
    """s2 -> /scratch/s2, /scratch/s2/cur -> /real: the tool makes s2/cur/parts, and
    the container must resolve /scratch/s2 by that name to get there."""
    host = FakeHost([CWD, "/real"], links={f"{CWD}/s2": "/scratch/s2", "/scratch/s2/cur": "/real"})
    mounts = plan(host, inp("s2/cur/parts", kind="dir"))
    assert rw("/scratch/s2/cur", source="/real") in mounts


def test_an_input_missing_under_root_is_refused_alike_when_run_and_ahead() -> None:
    missing = inp("/nowhere/parts", "outdir", kind="dir")
    for ahead in (False, True):
        with pytest.raises(MountRefused) as info:
            plan_mounts([missing], CWD, host=FakeHost([CWD]), ahead=ahead)
        message = str(info.value)
        assert message.count("/nowhere/parts") == 1, message
        assert "does not exist" in message and "create /nowhere first" in message
