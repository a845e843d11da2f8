"""Which outputs an interrupted step's part is moved aside from, and what is said.

Cases an audit found: an implicit output naming a mutable input's path had
the user's Measurement Set renamed, and one a stopped (or failed) step had
half-rewritten in place got no word at all; a new directory too big to sign, and the
files a harvest glob matches, kept their names; a directory that held other
steps' products was moved as a whole; a rename that failed was not said.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi import interrupted_outputs
from shinobi.backends.base import PathUse
from shinobi.interrupted_outputs import set_aside, unfinished
from shinobi.untouched_outputs import existing_outputs, untouched


def _aged(*paths: Path) -> None:
    """An earlier run's: an hour old, and clearly before the step (ctime cannot be set back)."""
    old = time.time() - 3600
    for path in paths:
        os.utime(path, (old, old))
    time.sleep(0.1)


def _started(uses: list[PathUse]) -> tuple[dict, float]:  # type: ignore[type-arg]
    before = existing_outputs(uses)
    time.sleep(0.06)  # timestamps tick coarsely: the step's writes come clearly after
    return before, time.time()


def test_an_implicit_output_naming_a_mutable_input_is_the_users(tmp_path: Path) -> None:
    ms = tmp_path / "raw.ms"
    ms.mkdir()
    uses = [
        PathUse(str(ms), "input", "vis", "dir", mutable=True),
        PathUse(str(ms), "output", "ms", "dir"),
    ]
    before, started = _started(uses)
    (ms / "HISTORY").write_text("flagged half\n")
    (aside,) = set_aside(uses, {"vis"}, before, started)
    assert aside.moved_to is None and (ms / "HISTORY").exists()
    assert "half-rewritten" in aside.warning()


# -- an input the step rewrites in place (mutable): never moved, said when changed ---
def _a_measurement_set(tmp_path: Path) -> tuple[Path, list[PathUse]]:
    """``raw.ms``, an hour old, that the step rewrites in place."""
    ms = tmp_path / "raw.ms"
    (ms / "ANTENNA").mkdir(parents=True)
    (ms / "table.dat").write_text("raw visibilities\n")
    (ms / "ANTENNA" / "table.dat").write_text("antennas\n")
    _aged(ms / "ANTENNA" / "table.dat", ms / "table.dat", ms / "ANTENNA", ms)
    return ms, [PathUse(str(ms), "input", "vis", "dir", mutable=True)]


@pytest.mark.parametrize(
    "rewrite",
    [
        lambda ms: (ms / "ANTENNA" / "table.dat").write_text("half\n"),  # deep, in place
        lambda ms: (ms / "NEWCOL").touch(),  # a new column
        lambda ms: (ms / "table.dat").unlink(),  # a table taken away
    ],
    ids=["nested-file", "new-entry", "removed-entry"],
)
def test_a_stopped_step_that_changed_its_mutable_input_says_so_and_leaves_it(
    tmp_path: Path, rewrite: Callable[[Path], object]
) -> None:
    """An MS half-flagged by a stopped step got no word: it passed for one the
    step had never touched, and the next run flagged it again."""
    ms, uses = _a_measurement_set(tmp_path)
    before, started = _started(uses)
    rewrite(ms)
    entries = sorted(ms.rglob("*"))
    (aside,) = set_aside(uses, (), before, started)
    assert aside.moved_to is None and sorted(ms.rglob("*")) == entries  # where it was
    warning = aside.warning()
    assert f"'{ms}'" in warning and "an input it rewrites in place" in warning
    assert "half-rewritten" in warning and "copy of the raw data" in warning
    assert "idempotent" in warning
    (failed,) = unfinished(uses, (), before, started)  # a step that failed by itself
    assert f"it failed after changing '{ms}'" in failed and "half-rewritten" in failed


def test_a_mutable_input_the_step_did_not_change_draws_no_word(tmp_path: Path) -> None:
    ms, uses = _a_measurement_set(tmp_path)
    uses.append(PathUse(str(ms), "output", "vis", "dir", mutable=True))  # a passthrough too
    before, started = _started(uses)
    assert set_aside(uses, {"vis"}, before, started) == []
    assert unfinished(uses, {"vis"}, before, started) == []
    assert untouched(before, started) == []  # left as it was by a step that exits 0: its job


def test_a_mutable_input_the_step_removed_is_said_gone(tmp_path: Path) -> None:
    ms, uses = _a_measurement_set(tmp_path)
    before, started = _started(uses)
    shutil.rmtree(ms)  # a tool that writes the new MS aside and swaps it in, stopped between
    (aside,) = set_aside(uses, (), before, started)
    assert "now gone" in aside.warning() and "copy of the raw data" in aside.warning()
    (failed,) = unfinished(uses, (), before, started)
    assert f"it failed after removing '{ms}'" in failed


def test_a_mutable_input_too_big_to_compare_is_said_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shinobi.untouched_outputs.MAX_ENTRIES", 2)
    ms, uses = _a_measurement_set(tmp_path)
    before, started = _started(uses)
    (aside,) = set_aside(uses, (), before, started)
    assert aside.moved_to is None and ms.exists()
    assert "it may have been writing" in aside.warning()
    assert "could not tell whether the step changed it" in aside.warning()
    (failed,) = unfinished(uses, (), before, started)
    assert f"could not tell whether it changed '{ms}'" in failed


def test_a_mutable_input_of_a_step_that_runs_elsewhere_is_not_walked(tmp_path: Path) -> None:
    """Nothing looks at it again after such a step (a Slurm job) ends."""
    _, uses = _a_measurement_set(tmp_path)
    assert existing_outputs(uses, elsewhere=True) == {}
    assert existing_outputs(uses)[uses[0].path].rewritten


def test_a_new_directory_too_big_to_sign_is_moved_all_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shinobi.untouched_outputs.MAX_ENTRIES", 2)
    out = tmp_path / "big.ms"
    uses = [PathUse(str(out), "output", "ms", "dir")]
    before, started = _started(uses)
    out.mkdir()
    for i in range(5):
        (out / f"t{i}").write_text("row\n")
    (aside,) = set_aside(uses, (), before, started)
    assert aside.moved_to == f"{out}.interrupted"
    assert not out.exists() and len(os.listdir(aside.moved_to)) == 5


def test_a_directory_that_was_there_before_is_left_and_said(tmp_path: Path) -> None:
    products = tmp_path / "products"
    products.mkdir()
    (products / "a.fits").write_text("another step's\n")
    _aged(products / "a.fits", products)
    uses = [PathUse(str(products), "output", "products", "dir")]
    before, started = _started(uses)
    (products / "b.fits").write_text("half\n")
    (aside,) = set_aside(uses, (), before, started)
    assert aside.moved_to is None
    assert (products / "a.fits").exists()
    assert "left where it is" in aside.warning() and str(products) in aside.warning()


def test_a_directory_the_step_made_anew_is_moved(tmp_path: Path) -> None:
    out = tmp_path / "out.ms"
    out.mkdir()
    (out / "old").write_text("yesterday\n")
    uses = [PathUse(str(out), "output", "ms", "dir")]
    before, started = _started(uses)
    out.rename(tmp_path / "out.ms.bak")  # as a tool that replaces its output does
    out.mkdir()
    (out / "new").write_text("half\n")
    (aside,) = set_aside(uses, (), before, started)
    assert aside.moved_to == f"{out}.interrupted"


def _harvest_with_an_earlier_match(tmp_path: Path, name: str) -> tuple[list[PathUse], Path]:
    """A harvest glob ``img-*.fits`` that matches ``name``, an earlier run's file."""
    old = tmp_path / name
    old.write_text("an earlier run's\n")
    _aged(old)
    return [PathUse(str(tmp_path / "img-*.fits"), "output", "images", "any", pattern=True)], old


def test_what_a_harvest_glob_matches_counts_file_by_file(tmp_path: Path) -> None:
    uses, old = _harvest_with_an_earlier_match(tmp_path, "img-psf.fits")
    before, started = _started(uses)
    (tmp_path / "img-image.fits").write_text("half\n")
    (aside,) = set_aside(uses, (), before, started)
    assert aside.path == str(tmp_path / "img-image.fits")
    assert old.exists()  # not written by the stopped step: it stays


def test_a_harvest_the_step_wrote_nothing_of_is_found(tmp_path: Path) -> None:
    """An hour-old image the glob matches again passed as this run's product."""
    uses, _ = _harvest_with_an_earlier_match(tmp_path, "img-image.fits")
    before, started = _started(uses)
    assert untouched(before, started) == [str(tmp_path / "img-*.fits")]


@pytest.mark.parametrize("written", ["img-image.fits", "img-residual.fits"])
def test_a_harvest_the_step_wrote_into_is_not(tmp_path: Path, written: str) -> None:
    """One old match beside what the step wrote (rewritten or new) is no quiet failure."""
    uses, _ = _harvest_with_an_earlier_match(tmp_path, "img-psf.fits")
    (tmp_path / "img-image.fits").write_text("yesterday's\n")
    _aged(tmp_path / "img-image.fits")
    before, started = _started(uses)
    (tmp_path / written).write_text("today's\n")
    assert untouched(before, started) == []


def test_a_rename_that_fails_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.txt"
    uses = [PathUse(str(out), "output", "out", "file")]
    before, started = _started(uses)
    out.write_text("half\n")

    def busy(src: str, dst: str) -> None:
        raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), src)

    monkeypatch.setattr(interrupted_outputs.os, "rename", busy)
    (aside,) = set_aside(uses, (), before, started)
    assert aside.moved_to is None and out.exists()
    warning = aside.warning()
    assert "could not be renamed aside" in warning and os.strerror(errno.EBUSY) in warning
    assert "unfinished" in warning


def test_a_device_a_fifo_or_a_link_to_one_is_never_moved(tmp_path: Path) -> None:
    """As root, renaming a log sent to /dev/null would rename the host's /dev/null."""
    (tmp_path / "sink").symlink_to(os.devnull)
    os.mkfifo(tmp_path / "pipe")
    uses = [PathUse(str(tmp_path / name), "output", name, "file") for name in ("sink", "pipe")]
    before, started = _started(uses)
    assert set_aside(uses, set(), before, started) == []
    assert os.readlink(tmp_path / "sink") == os.devnull and (tmp_path / "pipe").exists()
    assert os.path.exists(os.devnull)


def test_a_harvest_match_another_step_produced_is_not_moved(tmp_path: Path) -> None:
    """``img*.fits`` also matches ``img-other.fits``, which a step beside this one made."""
    uses = [PathUse(str(tmp_path / "img*.fits"), "output", "images", "file", pattern=True)]
    before, started = _started(uses)
    (tmp_path / "img-1.fits").write_text("part\n")
    (tmp_path / "img-other.fits").write_text("finished\n")
    others = {str(tmp_path / "img-other.fits")}
    moved = set_aside(uses, set(), before, started, others)
    assert [a.path for a in moved] == [str(tmp_path / "img-1.fits")]
    assert (tmp_path / "img-other.fits").read_text() == "finished\n"


def test_a_passthrough_output_the_step_made_is_moved_like_a_product(tmp_path: Path) -> None:
    """`out: Path` given to write, stopped half-way: `partial` kept the final
    name, with no word of it anywhere (an implicit output was moved)."""
    out = tmp_path / "pt out.bin"
    uses = [PathUse(str(out), "input", "out", "file"), PathUse(str(out), "output", "out", "file")]
    before, started = _started(uses)
    out.write_text("partial")
    (aside,) = set_aside(uses, {"out"}, before, started)
    assert aside.moved_to == f"{out}.interrupted" and not out.exists()


def test_a_passthrough_output_that_was_there_is_left_and_said(tmp_path: Path) -> None:
    out = tmp_path / "table.txt"
    out.write_text("the user's rows\n")
    _aged(out)
    uses = [PathUse(str(out), "input", "out", "file"), PathUse(str(out), "output", "out", "file")]
    before, started = _started(uses)
    with out.open("a") as table:
        table.write("half a row")
    (aside,) = set_aside(uses, {"out"}, before, started)
    assert aside.moved_to is None and out.exists()
    assert "may be unfinished" in aside.warning() and str(out) in aside.warning()
    untouched_use = tmp_path / "untouched.txt"
    untouched_use.write_text("kept\n")
    _aged(untouched_use)
    uses = [PathUse(str(untouched_use), "output", "t", "file")]
    before, started = _started(uses)
    assert set_aside(uses, {"t"}, before, started) == []  # not written: nothing to say


def _linked_to_scratch(tmp_path: Path) -> tuple[Path, Path]:
    """``img.fits``, the user's link to where the big product is to go (a dangling link)."""
    (tmp_path / "scratch").mkdir()
    link, target = tmp_path / "img.fits", tmp_path / "scratch" / "img.fits"
    link.symlink_to(target)
    _aged()  # made before the step started
    return link, target


def test_through_the_users_link_what_it_leads_to_is_set_aside_and_the_link_kept(
    tmp_path: Path,
) -> None:
    """The link was renamed: the part kept the product's name on scratch, and the
    next run, finding no link, wrote a 13 GB product onto the wrong disk."""
    link, target = _linked_to_scratch(tmp_path)
    uses = [PathUse(str(link), "output", "image", "file")]
    before, started = _started(uses)
    target.write_text("half\n")
    (aside,) = set_aside(uses, (), before, started)
    assert aside.moved_to == f"{target}.interrupted" and not target.exists()
    assert Path(aside.moved_to).read_text() == "half\n"
    assert link.is_symlink() and os.readlink(link) == str(target)  # the next run writes there
    warning = aside.warning()
    assert f"'{target}.interrupted'" in warning and f"'{target}'" in warning


def test_a_link_the_step_made_is_the_product_and_what_it_leads_to_stays(tmp_path: Path) -> None:
    """A tool that exposes a data set under a new name: the data set is not its to move."""
    data = tmp_path / "raw.ms"
    data.mkdir()
    out = tmp_path / "out.ms"
    uses = [PathUse(str(out), "output", "ms", "dir")]
    before, started = _started(uses)
    out.symlink_to(data)
    (data / "table").write_text("row\n")
    (aside,) = set_aside(uses, (), before, started)
    assert aside.moved_to == f"{out}.interrupted" and aside.target is None
    assert os.readlink(aside.moved_to) == str(data) and (data / "table").exists()


def test_the_users_link_to_one_of_the_steps_inputs_is_left_and_said(tmp_path: Path) -> None:
    link, target = _linked_to_scratch(tmp_path)
    target.write_text("the input\n")
    uses = [
        PathUse(str(target), "input", "obs", "file"),
        PathUse(str(link), "output", "image", "file"),
    ]
    _aged(target)
    before, started = _started(uses)
    with target.open("a") as written:
        written.write("half\n")
    (aside,) = set_aside(uses, (), before, started)
    assert aside.moved_to is None and target.exists() and link.is_symlink()
    assert f"'{target}'" in aside.warning() and "one of its inputs" in aside.warning()


@pytest.mark.parametrize("entries", [5, 1], ids=["too-big-before", "grew-too-big"])
@pytest.mark.parametrize("passthroughs", [(), ("ms",)], ids=["product", "passthrough"])
def test_a_directory_too_big_to_compare_is_left_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: int, passthroughs: tuple[str, ...]
) -> None:
    """Past 10,000 entries a Measurement Set the step was writing got no word at
    all, where a small one was said to be possibly unfinished."""
    monkeypatch.setattr("shinobi.untouched_outputs.MAX_ENTRIES", 2)
    ms = tmp_path / "t.ms"
    ms.mkdir()
    for i in range(entries):
        (ms / f"t{i}").write_text("yesterday\n")
    _aged(ms, *ms.iterdir())
    uses = [PathUse(str(ms), "output", "ms", "dir")]
    uses += [PathUse(str(ms), "input", "ms", "dir")] if passthroughs else []  # the path given
    before, started = _started(uses)
    for i in range(entries, entries + 3):
        (ms / f"t{i}").write_text("half\n")
    (aside,) = set_aside(uses, passthroughs, before, started)
    assert aside.moved_to is None and len(os.listdir(ms)) == entries + 3
    warning = aside.warning()
    assert str(ms) in warning and "could not tell whether the step wrote into it" in warning
    assert "may be unfinished" in warning


@pytest.mark.parametrize("image_first", [True, False])
def test_a_part_inside_a_directory_set_aside_goes_with_it_and_is_said_where_it_is(
    tmp_path: Path, image_first: bool
) -> None:
    """``image`` (``{outdir}/img.fits``) was renamed inside ``outdir`` first: its
    warning named ``res/img.fits.interrupted``, gone with ``res`` once that was
    renamed too."""
    res = tmp_path / "res"
    uses = [
        PathUse(str(res / "img.fits"), "output", "image", "file"),
        PathUse(str(res), "output", "outdir", "dir"),
    ]
    before, started = _started(uses if image_first else uses[::-1])
    res.mkdir()
    (res / "img.fits").write_text("half\n")
    asides = set_aside(uses if image_first else uses[::-1], (), before, started)
    assert {a.path: a.moved_to for a in asides} == {
        str(res): f"{res}.interrupted",
        str(res / "img.fits"): f"{res}.interrupted/img.fits",
    }
    assert (tmp_path / "res.interrupted" / "img.fits").read_text() == "half\n"
    for aside in asides:
        assert aside.moved_to is not None and os.path.exists(aside.moved_to), aside.warning()
        assert f"now {aside.moved_to!r}" in aside.warning()


def test_a_part_inside_a_directory_that_stays_is_set_aside_in_it(tmp_path: Path) -> None:
    res = tmp_path / "res"
    res.mkdir()
    (res / "other.fits").write_text("another step's\n")
    _aged(res / "other.fits", res)
    uses = [
        PathUse(str(res), "output", "outdir", "dir"),
        PathUse(str(res / "img.fits"), "output", "image", "file"),
    ]
    before, started = _started(uses)
    (res / "img.fits").write_text("half\n")
    asides = {a.path: a.moved_to for a in set_aside(uses, (), before, started)}
    assert asides == {str(res): None, str(res / "img.fits"): f"{res}/img.fits.interrupted"}


@pytest.mark.parametrize("directory_first", [True, False])
def test_a_sibling_whose_name_begins_with_a_directory_set_aside_is_set_aside_itself(
    tmp_path: Path, directory_first: bool
) -> None:
    """``img-model.fits`` is beside ``img``, not in it: taken for carried along by
    ``img``'s rename, it would be said to be at ``img.interrupted-model.fits`` and
    kept its final name, a half-written product passing for a finished one."""
    img, model = tmp_path / "img", tmp_path / "img-model.fits"
    uses = [
        PathUse(str(img), "output", "outdir", "dir"),
        PathUse(str(model), "output", "model", "file"),
    ]
    uses = uses if directory_first else uses[::-1]
    before, started = _started(uses)
    img.mkdir()
    (img / "psf.fits").write_text("half\n")
    model.write_text("half\n")
    asides = {a.path: a.moved_to for a in set_aside(uses, (), before, started)}
    assert asides == {str(img): f"{img}.interrupted", str(model): f"{model}.interrupted"}
    assert not img.exists() and not model.exists()
    assert (tmp_path / "img-model.fits.interrupted").read_text() == "half\n"
    assert (tmp_path / "img.interrupted" / "psf.fits").read_text() == "half\n"


def test_the_parts_earlier_interruptions_left_are_counted_in_the_warning(
    tmp_path: Path,
) -> None:
    """Each Ctrl-C of a step writing a big product kept one more part beside it, and
    nothing said they pile up (two of a 13 GB Measurement Set fill a scratch quota)."""
    image = tmp_path / "img.fits"
    uses = [PathUse(str(image), "output", "image", "file")]
    said = []
    for _ in range(3):
        before, started = _started(uses)
        image.write_text("half\n")
        (aside,) = set_aside(uses, (), before, started)
        said.append(aside.warning())
    assert "earlier interruptions" not in said[0]
    assert "1 part(s) earlier interruptions set aside are beside it" in said[1]
    assert "2 part(s) earlier" in said[2] and aside.moved_to == f"{image}.interrupted-3"
