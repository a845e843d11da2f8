"""The path helpers the ordering edges use: Path.resolve(), and the outermost used ancestor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shinobi.offload import ordering
from shinobi.offload.ordering import Canonicaliser, _Outermost


def _tree(root: Path, files: int, links: int) -> list[str]:
    """``files`` plain names, ``links`` symlinks to them (one dangling), and a linked dir."""
    (root / "real").mkdir()
    (root / "via").symlink_to(root / "real")
    for i in range(files):
        (root / f"f{i:04d}").touch()
    for i in range(links):
        (root / f"l{i:04d}").symlink_to(root / f"f{i:04d}")
    (root / "dangling").symlink_to(root / "nowhere")
    names = [f"f{i:04d}" for i in range(files)] + [f"l{i:04d}" for i in range(links)]
    names += ["dangling", "missing", "via", "via/inside", "real/inside", "."]
    return [str(root / name) for name in names]


@pytest.mark.parametrize("files", [3, 200])  # below and past the first listing
def test_every_path_resolves_as_path_resolve_does(tmp_path: Path, files: int) -> None:
    canonical = Canonicaliser()
    paths = _tree(tmp_path, files, links=20)
    # With 200 files the first pass lists the directory and answers the links
    # (named after the files) from the listing; the second answers from memory.
    for _ in range(2):
        for path in paths:
            assert canonical(path) == str(Path(path).resolve()), path


def test_a_link_named_with_capitals_resolves_once_the_directory_is_listed(tmp_path: Path) -> None:
    """The listing keeps the links' names folded: looked up as spelt, ``Data.ms``
    would be taken for no link, and two rewriters of one MS, reached by its two
    names, would get no edge between them."""
    (tmp_path / "obs.ms").mkdir()
    (tmp_path / "Data.ms").symlink_to(tmp_path / "obs.ms")
    canonical = Canonicaliser()
    for i in range(80):  # past the lookups after which the directory is listed
        canonical(str(tmp_path / f"f{i}"))
    assert canonical(str(tmp_path / "Data.ms")) == str(tmp_path.resolve() / "obs.ms")


def test_a_directory_too_large_to_list_falls_back_to_lstat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed: list[int] = []
    real = ordering._links_in

    def spy(directory: str, budget: int) -> frozenset[str] | None:
        listed.append(budget)
        return real(directory, budget)

    monkeypatch.setattr(ordering, "_links_in", spy)
    paths = _tree(tmp_path, files=600, links=5)  # more entries than 4 x 64 lookups
    canonical = Canonicaliser()
    for path in paths[:64] + paths[600:]:
        assert canonical(path) == str(Path(path).resolve())
    assert listed == [256]  # tried once, gave up: 606 entries
    for path in paths[64:512]:
        assert canonical(path) == str(Path(path).resolve())
    assert listed == [256, 4 * 512]  # tried again at 512 lookups, and it fit
    assert canonical(str(tmp_path / "l0001")) == os.path.realpath(tmp_path / "f0001")


def test_the_outermost_used_ancestor_of_a_path_however_deep() -> None:
    deep = "/" + "/".join(["a"] * 1500)  # 3,000 characters: a valid path
    outermost = _Outermost({"/a/a", deep, "/b/c", "/b"})
    assert outermost(deep) == "/a/a"
    assert outermost("/b/c") == "/b"
    assert outermost("/b/c/d") == "/b"
    assert outermost("/a") == "/a"  # no used ancestor: itself
    assert outermost("/c/d") == "/c/d"
