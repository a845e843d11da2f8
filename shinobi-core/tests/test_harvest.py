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
