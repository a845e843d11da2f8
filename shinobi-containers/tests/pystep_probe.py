"""A pystep that reports where it ran; imported by test_pystep_live.py.

It lives in its own module because an out-of-process pystep is imported by
the runner from its source file, so it cannot be defined inside a test.
"""

from __future__ import annotations

import os

from pydantic import BaseModel

import shinobi
from shinobi.steps import File


@shinobi.pystep(image=os.environ.get("SHINOBI_TEST_PYTHON_IMAGE", "shinobi-test/python:bookworm"))
def where_am_i(greeting: str) -> dict[str, str]:
    """What only the inside of a container shows: its own PID namespace, whose pid 1
    is the container's init, not the host's."""
    with open("/proc/1/cmdline", "rb") as fh:
        init = fh.read().split(b"\0")[0].decode()
    return {
        "greeting": greeting.upper(),
        "dockerenv": str(os.path.exists("/.dockerenv")),
        "init": init,
    }


class Written(BaseModel):
    out: File


@shinobi.pystep(image=os.environ.get("SHINOBI_TEST_PYTHON_IMAGE", "shinobi-test/python:bookworm"))
def write_to(out: File) -> Written:
    """Writes where it is told, making the directory: ``out`` is a passthrough output."""
    from pathlib import Path

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("written inside\n")
    return Written(out=out)


@shinobi.pystep(image=os.environ.get("SHINOBI_TEST_PYTHON_IMAGE", "shinobi-test/python:bookworm"))
def make_file(out: File) -> File:
    """Makes the file (and directory) it is given and returns it: a plain ``-> File``."""
    from pathlib import Path

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("made inside\n")
    return out


@shinobi.pystep(image=os.environ.get("SHINOBI_TEST_PYTHON_IMAGE", "shinobi-test/python:bookworm"))
def beside_the_cwd() -> list[str]:
    """What the step sees of the directory that holds its working directory."""
    parent = os.path.dirname(os.getcwd())
    return sorted(os.listdir(parent)) if os.path.isdir(parent) else []
