"""No mount lays the host's /usr/bin, /usr/lib, /etc, ... over the image's own.

An input's directory is mounted for it and an output's nearest existing one:
for ``--src /usr/bin/env`` that was the host's /usr/bin, read-write, over the
image's (apptainer: "exec /usr/bin/sh failed: a shared library is likely
missing in the image"), and for an output in ``/usr/x/`` all of /usr. Such a
path is refused before the run, saying why and what to do. Mounting the file
alone is no way out: the image may have a file of its own there, or a link the
engine follows (busybox's ``/usr/bin/env`` is its ``/bin/busybox``, its shell).
"""

from __future__ import annotations

import os

import pytest
from test_bind_mounts import CWD, FakeHost, inp, out, plan, ro, rw
from test_cli_live import refused_target

from shinobi.backends.base import PathUse
from shinobi_containers.mounts import MountRefused, plan_mounts

HOST = FakeHost(
    [
        "/usr/bin/env",
        "/usr/lib/os-release",
        "/usr/lib/x86_64-linux-gnu/libz.so",
        "/etc/hosts",
        "/etc/alternatives/awk.1.gz",
        "/usr/share/man/mawk.1.gz",
        "/usr/share/casacore/data/leap.tbl",
        "/opt/data/x.fits",
        "/usr/local/share/ca-certificates",
        "/usr/local/etc/php",
        CWD,
    ],
    links={
        "/bin": "/usr/bin",
        "/usr/share/man/awk.1.gz": "/etc/alternatives/awk.1.gz",
        "/etc/alternatives/awk.1.gz": "/usr/share/man/mawk.1.gz",
    },
)


@pytest.mark.parametrize(
    ("use", "said"),
    [
        (
            out("/usr/x/o.txt", field="dst"),
            "output 'dst' (/usr/x/o.txt) is in /usr, and mounting /usr would lay the host's"
            " /usr/bin over the image's own, replacing its programs, libraries or settings;"
            " write it under a directory of your own, or run this step on native",
        ),
        (out("/etc/new.conf", field="dst"), "is in /etc, and mounting /etc would lay"),
        (out("/bin/x/o.txt", field="dst"), "write it under a directory of your own"),
        (PathUse("/opt/*.log", "output", "dst", pattern=True), "harvest pattern 'dst'"),
        (
            inp("/usr/bin/env", field="dst"),
            "input 'dst' (/usr/bin/env) is in /usr/bin, and mounting /usr/bin would lay the"
            " host's /usr/bin over the image's own, replacing its programs, libraries or"
            " settings; copy it to a directory of your own, or run this step on native",
        ),
        (inp("/bin/env", field="dst"), "input 'dst' (/bin/env) is in /bin"),
        (inp("/etc/hosts", field="dst", writable=False), "copy it to a directory of your own"),
        (inp("/etc", field="dst", kind="dir"), "input 'dst' (/etc) is in /etc"),
        # inside a tree of programs, libraries or settings, too: the image's alternatives
        (
            inp("/usr/share/man/awk.1.gz", field="dst"),
            "mounting /etc/alternatives would lay the host's /etc/alternatives over the image's",
        ),
        (inp("/usr/lib/x86_64-linux-gnu/libz.so", field="dst"), "is in /usr/lib/x86_64-linux-gnu"),
        # /usr/local has the image's data and settings too (the host's lay over them)
        (out("/usr/local/share/new/o.txt", field="dst"), "is in /usr/local/share, and mounting"),
        (inp("/usr/local/etc/php/php.ini", field="dst"), "is in /usr/local/etc/php"),
    ],
)
def test_a_path_whose_mount_would_cover_an_image_tree_is_refused(use: PathUse, said: str) -> None:
    with pytest.raises(MountRefused) as refused:
        plan_mounts([use], CWD, step="image", host=HOST)
    text = str(refused.value)
    assert text.startswith("step 'image': ") and said in text and "\n" not in text


def test_a_directory_below_a_data_tree_is_mounted_as_any_other() -> None:
    assert plan(HOST, inp("/opt/data/x.fits")) == {rw("/opt/data"), rw(CWD)}
    deep = plan(HOST, inp("/usr/share/casacore/data/leap.tbl"))
    assert deep == {rw("/usr/share/casacore/data"), rw(CWD)}


@pytest.mark.parametrize("cwd", ["/etc", "/usr", "/var"])
def test_a_working_directory_that_covers_an_image_tree_is_refused(cwd: str) -> None:
    host = FakeHost(["/etc", "/usr/bin", "/var/lib"])
    with pytest.raises(MountRefused) as refused:
        plan_mounts([], cwd, step="image", host=host)
    assert f"the working directory {cwd} is a directory of the image's own" in str(refused.value)
    assert "run ninja from a directory of your own" in str(refused.value)


def test_an_output_in_usr_is_refused_before_anything_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Live, through the CLI: one line, exit 2, and no step has run."""
    work = tmp_path_factory.mktemp("image-trees")
    said = refused_target(work, f"/usr/shinobi-no-such-{os.getpid()}/t.txt")
    assert "is in /usr, and mounting /usr would lay" in said


def test_an_output_that_is_the_root_itself_is_not_told_to_create_it() -> None:
    """It said "create / first, or write under an existing directory"."""
    with pytest.raises(MountRefused) as refused:
        plan_mounts([out("/", field="target")], CWD, step="touch", host=HOST)
    assert (
        str(refused.value) == "step 'touch': output 'target' (/) is / itself; name a path under it"
    )


def test_a_pysteps_working_directory_is_mounted_itself_not_its_parent() -> None:
    """Declared as an output, the working directory got its parent mounted: the user's
    home, writable; from /scratch, /opt/proj or /tmp the step was refused."""
    for cwd in ("/scratch", "/opt/proj", "/home/alice/proj"):
        host = FakeHost([cwd, f"{cwd}/.shinobi/runs/r/pysteps/ws"])
        uses = [
            PathUse(cwd, "input", "cwd", "dir", mutable=True),
            PathUse(f"{cwd}/.shinobi/runs/r/pysteps/ws", "input", "workspace", "dir", mutable=True),
        ]
        assert plan(host, *uses, cwd=cwd) == {rw(cwd)}


def test_a_read_only_input_an_earlier_step_makes_behind_a_link_is_protected_where_it_lies() -> None:
    """Planned ahead (a compiled job), its read-only mount named the path through the
    results link, which apptainer skips without a word: the tool could write it."""
    host = FakeHost(["/root/p", "/scratch/x/out/prod"], links={"/root/p/results": "/scratch/x/out"})
    made_later = inp("/root/p/results/prod/listing.txt", field="src", writable=False)
    beside = out("/root/p/results/prod/summary.txt", field="dst")  # the folder is writable
    mounts = set(plan_mounts([made_later, beside], "/root/p", step="b", host=host, ahead=True))
    assert ro("/scratch/x/out/prod/listing.txt") in mounts
    assert not any(m.target == "/root/p/results/prod/listing.txt" for m in mounts)


@pytest.mark.parametrize("link", ["/var/lib/mx", "../../var/lib/mx"])
def test_a_directory_input_linked_into_a_data_tree_mounts_the_directory(link: str) -> None:
    """The link's target directory was taken for a file: its parent, /var/lib, refused."""
    target = os.path.normpath(os.path.join("/root/p", link))
    host = FakeHost(["/root/p", "/var/lib/mx/geodetic"], links={"/root/p/meas": target})
    mounts = plan(host, inp("/root/p/meas", field="measures", kind="dir"), cwd="/root/p")
    assert rw("/var/lib/mx") in mounts and not any(m.target == "/var/lib" for m in mounts)


def test_a_directory_rewritten_in_place_mounts_itself_not_its_parent() -> None:
    """Its passthrough output asked for its parent: /var/lib refused, /usr/share/pkg
    exposed writable for /usr/share/pkg/data."""
    for path in ("/var/lib/mx", "/usr/share/pkg/data"):
        host = FakeHost([path, CWD])
        uses = [
            inp(path, field="measures", kind="dir", mutable=True),
            out(path, field="measures", kind="dir"),
        ]
        assert plan(host, *uses) == {rw(path), rw(CWD)}
