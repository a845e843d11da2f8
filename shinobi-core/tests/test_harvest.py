"""What a harvest glob collects."""

from __future__ import annotations

from pathlib import Path

from shinobi.harvest import anchored, harvest


def test_a_double_star_reaches_every_depth(tmp_path: Path) -> None:
    """``o/**/*.fits`` gave one level only (``o/a/b.fits``), not ``o/top.fits`` nor
    ``o/a/c/d.fits``: a product tree harvested in part, without a word."""
    for name in ("o/top.fits", "o/a/b.fits", "o/a/c/d.fits", "o/a/c/e.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    found = harvest(anchored(str(tmp_path), "o/**/*.fits"))
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found] == [
        "o/a/b.fits",
        "o/a/c/d.fits",
        "o/top.fits",
    ]


def test_nothing_inside_a_directory_set_aside_is_harvested(tmp_path: Path) -> None:
    """An interrupted slice's ``out/scan2`` became ``out/scan2.interrupted``; a
    gather's ``out/**/*.fits`` handed its half-written image on as a product."""
    for name in ("out/scan1/img.fits", "out/scan2.interrupted/img.fits", "out/scan2/img.fits"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    found = harvest(anchored(str(tmp_path), "out/**/*.fits"))
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found] == [
        "out/scan1/img.fits",
        "out/scan2/img.fits",
    ]


def test_a_project_folder_named_like_a_set_aside_part_still_harvests(tmp_path: Path) -> None:
    project = tmp_path / "obs.interrupted"
    (project / "img-1.fits").parent.mkdir(parents=True)
    (project / "img-1.fits").write_text("")
    found = harvest(anchored(str(project), "img-*.fits"))
    assert [Path(p).name for p in found] == ["img-1.fits"]
