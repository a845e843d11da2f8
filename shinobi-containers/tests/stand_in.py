"""An engine binary for tests that call ``prepare()`` without an engine to run.

``/bin/true`` served, until a configured binary that is not the engine came to
be refused before any step (``/bin/true`` made every step "succeed" having run
nothing). This program answers ``--version`` as every engine and anything else
with 0, so a test can plan steps with no daemon asked for real.
"""

from __future__ import annotations

import os
import tempfile

__all__ = ["QUIET_ENGINE"]


def _written() -> str:
    folder = os.path.join(tempfile.gettempdir(), f"shinobi-stand-in-{os.getuid()}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "quiet-engine")
    text = (
        '#!/bin/sh\nif [ "$1" = --version ]; then\n'
        "  printf 'docker version 0\\npodman version 0\\napptainer version 0\\n'\nfi\nexit 0\n"
    )
    try:
        with open(path) as stream:
            current = stream.read()
    except OSError:
        current = None
    if current != text:
        scratch = f"{path}.{os.getpid()}"
        with open(scratch, "w") as stream:
            stream.write(text)
        os.chmod(scratch, 0o755)
        os.replace(scratch, path)
    return path


#: The stand-in's path: every engine by ``--version``, success for anything else.
QUIET_ENGINE = _written()
