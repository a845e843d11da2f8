"""Long output printed in batches: the same bytes as printing it as one string.

A dry run's lines and a compile's scripts reach stdout in batches (see
shinobi.cli.long_output): these tests hold the text to what one
``click.echo`` of the whole would print, at and around the batch sizes,
through a stdout that is not a terminal (where click strips ANSI codes).
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from test_offload_fixtures import plan_of
from test_offload_jobs import pipe

from shinobi.cli.long_output import BATCH, echo_lines
from shinobi.offload.base import CompileOptions, Script, Workflow, compile_jobs


def _printed(write: object) -> str:
    @click.command()
    def command() -> None:
        write()  # type: ignore[operator]

    result = CliRunner().invoke(command, [])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("lazily", [False, True], ids=["list", "generator"])
@pytest.mark.parametrize("count", [0, 1, 2, BATCH - 1, BATCH, BATCH + 1, 2 * BATCH + 3])
def test_lines_print_as_one_echo_of_them_joined_would(count: int, lazily: bool) -> None:
    # ANSI codes in a line too: click strips them off a stdout that is no terminal
    lines = [
        f"line {i} \x1b[1mbold\x1b[0m │ é" if i % 7 == 0 else f"line {i}" for i in range(count)
    ]

    batched = _printed(lambda: echo_lines((line for line in lines) if lazily else lines))

    assert batched == _printed(lambda: click.echo("\n".join(lines)))
    assert "\x1b" not in batched
    assert batched.count("\n") == max(count, 1)


def _workflow(tmp_path: Path, count: int) -> Workflow:
    options = CompileOptions(workdir=tmp_path, cwd=tmp_path, run_id="run")
    jobs = compile_jobs(plan_of(pipe(), {"path": "x"}), options)
    scripts = [Script(f"job{i}", f"job{i}.sh", f"#!/bin/bash\necho {i}\n") for i in range(count)]
    return Workflow(engine="test", options=options, jobs=jobs, scripts=scripts)


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 129])
def test_a_workflow_in_parts_is_its_whole_text(tmp_path: Path, count: int) -> None:
    workflow = _workflow(tmp_path, count)
    headed = [f"# ---- job{i}.sh (job{i}) ----\n#!/bin/bash\necho {i}\n" for i in range(count)]

    parts = list(workflow.rendered_in_parts())

    assert "".join(parts) == workflow.render() == "\n".join(headed)
    assert len(parts) == -(-count // 64)  # 64 scripts a part, the last one the rest
    # a part ends only between scripts: each begins with a script's header
    assert all(part.startswith("# ---- job") for part in parts)
