"""``ninja`` run inside the test's own process, for tests that only read what it prints."""

from __future__ import annotations

from typing import AnyStr

import pytest

from shinobi.cli.main import main

__all__ = ["in_process"]


def in_process(capsys: pytest.CaptureFixture[AnyStr], *args: str) -> tuple[int, AnyStr, AnyStr]:
    """``ninja ARGS`` through :func:`main`: (exit status, stdout, stderr), as text with
    ``capsys``, as bytes with ``capsysbinary`` (``ninja logs`` prints a tool's own bytes)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
