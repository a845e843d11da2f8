"""Calling an engine's CLI for a quick answer (info, inspect, rm), never hanging.

The step itself runs through :func:`shinobi.backends.process.run_process`;
this is for the short side calls around it, which must neither block a run
for long nor raise on a missing binary.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["CliAnswer", "call"]

#: Exit codes :func:`call` reports when the command never ran to completion.
NOT_FOUND = 127
TIMED_OUT = 124


@dataclass(frozen=True, slots=True)
class CliAnswer:
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def last_line(self) -> str:
        """The last non-empty line of stderr (else stdout): where CLIs put the reason."""
        for text in (self.stderr, self.stdout):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            if lines:
                return lines[-1][:300]
        return f"exit code {self.returncode}"


def call(argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None) -> CliAnswer:
    """Run ``argv`` to completion within ``timeout`` seconds and return what it said."""
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            check=False,
        )
    except FileNotFoundError:
        where = "does not exist" if "/" in argv[0] else "not found on PATH"
        return CliAnswer(NOT_FOUND, "", f"{argv[0]}: {where}")
    except subprocess.TimeoutExpired:
        return CliAnswer(TIMED_OUT, "", f"{argv[0]} did not answer within {timeout:g}s")
    return CliAnswer(done.returncode, done.stdout, done.stderr)
