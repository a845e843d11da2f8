"""Choosing the digest a pinned run uses."""

from __future__ import annotations

import hashlib
from pathlib import Path

from shinobi_containers.digest import choose_reference, repository_of, sif_digest


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
