"""The exit hook of ``ninja``: exit is fast, and garbage is still finalised at exit."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from shinobi.cli import main as cli_main


def test_the_exit_hook_is_registered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    registered: list[Callable[..., Any]] = []
    monkeypatch.setattr(cli_main, "_exit_hook_registered", False)
    monkeypatch.setattr(cli_main.atexit, "register", registered.append)
    for _ in range(2):
        cli_main.main(["--help"])
    assert registered == [cli_main._collect_then_freeze]


def test_cyclic_garbage_left_at_exit_is_still_finalised() -> None:
    code = (
        "import sys\n"
        "from shinobi.cli.main import main\n"
        "class Cycle:\n"
        "    def __del__(self):\n"
        "        sys.stdout.write('finalised\\n')\n"
        "        sys.stdout.flush()\n"
        "a = Cycle()\n"
        "a.me = a\n"
        "del a\n"
        "main(['--help'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("finalised\n")
