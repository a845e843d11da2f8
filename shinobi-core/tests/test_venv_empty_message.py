"""An exception with an empty message, raised by a pystep in a venv, read "the
pystep raised ValueError:" (a dangling colon); in ninja's own process it is
just the type, and so it is now in a venv too."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from shinobi.config import load_config
from shinobi.loaders import load_target
from shinobi.runner import run_recipe
from shinobi.steps.result import StepResult


def _run(tmp_path: Path, venv: Path, body: str) -> StepResult:
    source = tmp_path / "steps.py"
    source.write_text(
        textwrap.dedent(
            f"""
            import shinobi

            @shinobi.pystep(venv={str(venv)!r})
            def f(n: int = 1) -> int:
                {body}
            """
        )
    )
    config = load_config({"cache.enabled": False})
    return run_recipe(load_target(f"{source}:f"), cwd=tmp_path, config=config).steps[0]


def test_an_exception_with_no_message_has_no_dangling_colon(tmp_path: Path) -> None:
    venv = tmp_path / "plain"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    step = _run(tmp_path, venv, "raise ValueError()")
    assert step.error == "the pystep raised ValueError", step.error
    assert "Traceback" in step.stderr
