"""Tools a run will start on this machine, looked for before it starts.

A pipeline whose fifth step names a tool that is not installed would run
for hours and then fail with "command not found". Each distinct program of
the steps that run here (the native backend) is looked for on ``PATH``, or
relative to the run's directory when it is spelled as a path, before the
first step starts and in a dry run. A program that is missing is a warning,
not a refusal: an earlier step may build or fetch it (``./build/imager``).
Steps of other backends run where their tools are (an image, a venv, a
cluster node), and their backends check them.

One look per program, not per step: a 100,000-step recipe usually names a
handful of tools.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shinobi.graph import Graph
    from shinobi.session import Session

__all__ = ["is_executable", "missing_programs"]


def is_executable(path: str) -> bool:
    """Whether ``path`` is a file this user may run."""
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _found(program: str, cwd: str) -> bool:
    if os.sep in program:
        return is_executable(os.path.join(cwd, program))
    import shutil  # 2 ms of start-up (it loads three compressors): only for a bare name

    return shutil.which(program) is not None


def missing_programs(graph: Graph, session: Session) -> list[str]:
    """A warning for each program that native steps of ``graph`` name and this machine lacks."""
    from shinobi.dispatch import choose_backend

    looked: set[tuple[int, str | None, str | None]] = set()
    programs: dict[str, str] = {}  # program -> the first step that names it
    for prefix, node in graph.every_node():
        slot = (id(node.step), node.backend, node.venv)  # its kind is its step's
        if slot in looked:
            continue
        looked.add(slot)
        if node.kind == "cab" and choose_backend(session, node) == "native":
            program = node.step.command[0]
            if program not in programs:
                programs[program] = f"{prefix}{node.name}"
    return [
        f"step {step!r} runs {program!r}, which is not {_where(program, session.cwd)}: the"
        " step will fail unless an earlier step provides it (install it, or give the step a"
        " backend that has it)"
        for program, step in programs.items()
        if not _found(program, session.cwd)
    ]


def _where(program: str, cwd: str) -> str:
    if os.sep not in program:
        return "on PATH on this machine"
    if os.path.isabs(program):
        return "there (or not executable) on this machine"
    # taken from where the steps run, not from the recipe file's folder: a run started
    # elsewhere looked for bin/wsclean there, and said only "not there"
    return (
        f"in {cwd} (or not executable), where the steps run and a relative path is taken"
        " from, not from the recipe file's folder"
    )
