"""Choosing the digest a pinned run uses."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from shinobi.backends.base import Invocation
from shinobi_containers import apptainer
from shinobi_containers.digest import choose_reference, repository_of, sif_digest
from shinobi_containers.errors import ImageUnavailable


def test_repository_of_drops_tag_and_digest_but_keeps_a_registry_port() -> None:
    assert repository_of("shinobi-test/busybox:latest") == "shinobi-test/busybox"
    assert repository_of("localhost:5000/x/y:1") == "localhost:5000/x/y"
    assert repository_of("localhost:5000/x/y") == "localhost:5000/x/y"
    assert repository_of("x/y@sha256:abc") == "x/y"


def test_the_images_own_repository_digest_wins() -> None:
    digests = ["other/name@sha256:1", "quay.io/stimela/wsclean@sha256:2"]
    chosen = choose_reference("quay.io/stimela/wsclean:1.7", digests, "sha256:ff")
    assert chosen == "quay.io/stimela/wsclean@sha256:2"


def test_another_repository_digest_of_the_same_image_is_next() -> None:
    assert choose_reference("a/b:1", ["c/d@sha256:1"], "sha256:ff") == "c/d@sha256:1"


def test_a_locally_imported_image_is_pinned_by_its_id() -> None:
    assert choose_reference("local/busybox:1", [], "sha256:ff") == "sha256:ff"
    assert choose_reference("local/busybox:1", [], "ff") == "sha256:ff"


def test_a_sif_is_pinned_by_the_sha256_of_its_bytes(tmp_path: Path) -> None:
    image = tmp_path / "tool.sif"
    image.write_bytes(b"not really a sif")
    expected = "sha256:" + hashlib.sha256(b"not really a sif").hexdigest()
    assert sif_digest(str(image)) == expected
    image.write_bytes(b"rebuilt, longer than before")
    assert sif_digest(str(image)) != expected


def test_an_image_file_this_user_cannot_read_is_refused_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pinned with --provenance, it was "backend 'apptainer' raised PermissionError:
    ... report it to shinobi-containers's authors"."""
    image = tmp_path / "priv.sif"
    image.write_bytes(b"sif")

    def unreadable(path: str) -> str:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(apptainer, "sif_digest", unreadable)  # root reads any file
    invocation = Invocation(step="s", argv=("true",), cwd=str(tmp_path), image=str(image))
    with pytest.raises(ImageUnavailable) as info:
        apptainer.ApptainerBackend().pin(invocation)
    assert str(info.value) == (
        f"cannot read the image file {image} to pin it (Permission denied); make it readable"
        f" (`chmod a+r {image}`), or copy it somewhere this user can read"
    )
