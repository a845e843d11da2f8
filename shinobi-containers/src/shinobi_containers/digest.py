"""Pinning an image to exactly what runs: a digest instead of a movable tag.

With provenance on, a step is run by digest and the digest is recorded, so a
manifest names the image bytes rather than a tag someone may re-point later.
Images imported locally (``docker import``, ``docker build`` without a
registry) have no repository digest; their image ID is a content digest too
and the engine runs it just as well. For apptainer the image is a file, and
its sha256 is the pin.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from functools import cache

from shinobi_containers.cli import call
from shinobi_containers.errors import ImageUnavailable

__all__ = ["choose_reference", "oci_image_reference", "repository_of", "sif_digest"]

INSPECT_TIMEOUT = 30.0


def repository_of(image: str) -> str:
    """``repo/name`` of ``repo/name:tag`` or ``repo/name@sha256:...`` (a port stays)."""
    name = image.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > slash else name


def choose_reference(image: str, repo_digests: Sequence[str], image_id: str) -> str:
    """The most faithful pinned reference for ``image``.

    A repository digest of the image's own repository first, then any other
    repository digest (the same content under another name), then the ID.
    """
    repository = repository_of(image)
    for reference in repo_digests:
        if repository_of(reference) == repository:
            return reference
    if repo_digests:
        return repo_digests[0]
    return image_id if image_id.startswith("sha256:") else f"sha256:{image_id}"


def oci_image_reference(binary: str, engine: str, image: str) -> str:
    """``image`` pinned through ``<engine> image inspect``; refused when it is not local."""
    answer = call(
        [binary, "image", "inspect", "--format", "{{json .RepoDigests}}\t{{.Id}}", image],
        INSPECT_TIMEOUT,
    )
    if not answer.ok:
        said = answer.last_line()
        if "Cannot connect" in said or "daemon running" in said:  # not the image's fault
            raise ImageUnavailable(f"{engine} is not answering ({said}); start it and run again")
        raise ImageUnavailable(
            f"image {image!r} is not in {engine}'s local store ({said}); pinning"
            f" (provenance) resolves images locally: `{engine} pull {image}` or build it first"
        )
    digests_json, _, image_id = answer.stdout.strip().partition("\t")
    try:
        digests = json.loads(digests_json) or []
    except ValueError:
        digests = []
    return choose_reference(image, [str(d) for d in digests], image_id.strip())


def sif_digest(path: str) -> str:
    """``sha256:<hex>`` of an image file, computed once per file version per process."""
    stat = os.stat(path)
    return _file_digest(os.path.realpath(path), stat.st_size, stat.st_mtime_ns, stat.st_ino)


@cache
def _file_digest(path: str, size: int, mtime_ns: int, inode: int) -> str:
    del size, mtime_ns, inode  # the cache key: a rewritten file is hashed again
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"
