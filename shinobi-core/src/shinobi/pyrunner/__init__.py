"""The script that runs one @pystep in another interpreter (a venv's, an image's).

:data:`RUNNER` is its path. It is executed as a file, never imported by the
step's interpreter as part of shinobi, so it must bootstrap its own import
path first: see :mod:`shinobi.pyrunner.runner`.
"""

from __future__ import annotations

import os

__all__ = ["BOOT", "RUNNER"]

_HERE = os.path.dirname(os.path.abspath(__file__))

#: ``python3 RUNNER SPEC.json`` runs the pystep described by SPEC.json.
RUNNER = os.path.join(_HERE, "runner.py")

#: ``python3 BOOT SPEC.json``: the same, once the interpreter is new enough.
BOOT = os.path.join(_HERE, "boot.py")
