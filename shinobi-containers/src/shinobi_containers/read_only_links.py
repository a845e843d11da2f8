"""A ``writable: false`` input reached through a symlink: its link kept as it was.

A read-only mount protects what a link points to. The link itself is a name in
a directory the container may write (the project, mounted read-write), and a
bind mount cannot be laid over a symlink: mounting there follows the link. A
tool that edits by replacing (``sed -i``) or deletes its input by name then
swaps the user's link for a file of its own, or removes it, while the data it
pointed to stays intact. That is the tool writing an input it was told not
to, so the step fails, naming the link and what it points to.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from shinobi.backends.base import Invocation

__all__ = ["read_only_links", "replaced_link"]


def read_only_links(invocation: Invocation) -> list[tuple[str, str, str]]:
    """(field, link path, its target as written) for each read-only input that is a link."""
    links = []
    for use in invocation.paths:
        if use.role != "input" or use.writable or use.pattern:
            continue
        path = os.path.join(invocation.cwd, use.path)
        try:
            links.append((use.field, path, os.readlink(path)))
        except OSError:
            continue  # no link (or nothing there): the read-only mount is the whole story
    return links


def replaced_link(links: Sequence[tuple[str, str, str]]) -> str | None:
    """Why the step failed when one of ``links`` is no longer the same link; None if all are."""
    for field, path, target in links:
        try:
            now: str | None = os.readlink(path)
        except OSError:
            now = None
        if now == target:
            continue
        became = "removed it" if not os.path.lexists(path) else "put a file of its own there"
        return (
            f"the tool replaced input {field!r}, marked writable: false: {path} was a link to"
            f" {target}, and the tool {became} ({target} itself was kept read-only and is"
            " intact); restore the link, and give the tool a copy if it must change its input"
        )
    return None
