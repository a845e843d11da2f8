"""A pystep that reports where it ran; imported by test_pystep_live.py.

It lives in its own module because an out-of-process pystep is imported by
the runner from its source file, so it cannot be defined inside a test.
"""

from __future__ import annotations

import os

import shinobi


@shinobi.pystep(image=os.environ.get("SHINOBI_TEST_PYTHON_IMAGE", "shinobi-test/python:bookworm"))
def where_am_i(greeting: str) -> dict[str, str]:
    """What only the inside of a docker container shows: /.dockerenv and its own uid map."""
    with open("/etc/os-release") as fh:
        release = fh.read()
    return {
        "greeting": greeting.upper(),
        "dockerenv": str(os.path.exists("/.dockerenv")),
        "pretty": next(line for line in release.splitlines() if line.startswith("PRETTY_NAME=")),
    }
