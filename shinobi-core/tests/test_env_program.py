"""A compiled job runs a program whose path holds ``=``, as ``ninja run`` does.

A cab with ``env`` ran as ``env K=V prog``: GNU ``env`` reads a program path
holding ``=`` (``tools/applycal=v2/applycal``) as one more variable, so the job
printed its environment, ran nothing, and completed. ``--`` does not help:
``env`` still reads ``NAME=...`` words after it as assignments.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from shinobi.offload.jobs import EXEC_ARGV, env_command


def test_a_program_holding_an_equals_sign_goes_through_exec_after_env() -> None:
    assert env_command(["/t/applycal=v2/applycal", "x"], {"OMP_NUM_THREADS": "4"}) == [
        "env",
        "--",
        "OMP_NUM_THREADS=4",
        *EXEC_ARGV,
        "/t/applycal=v2/applycal",
        "x",
    ]
    # the usual case stays as written: readable in the script and --explain
    assert env_command(["/t/applycal", "x"], {"A": "1"}) == ["env", "--", "A=1", "/t/applycal", "x"]
    assert env_command(["/t/a=b/tool"], {}) == ["/t/a=b/tool"]
    # a first word a shell would take for an assignment
    assert env_command(["tools=v2/run"], None) == [*EXEC_ARGV, "tools=v2/run"]


def test_the_rendered_words_run_the_program_and_hand_it_the_variable(tmp_path: Path) -> None:
    tool = tmp_path / "applycal=v2" / "applycal"
    tool.parent.mkdir()
    tool.write_text('#!/bin/sh\necho "ran $OMP_NUM_THREADS $1"\n')
    tool.chmod(0o755)
    for words in (
        env_command([str(tool), "-x=1"], {"OMP_NUM_THREADS": "4"}),
        env_command(["applycal=v2/applycal", "-x=1"], {}),
    ):
        done = subprocess.run(
            ["bash", "-c", shlex.join(words)],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "4"},
            capture_output=True,
            text=True,
            check=False,
        )
        assert (done.returncode, done.stdout) == (0, "ran 4 -x=1\n"), done.stderr


def test_a_first_word_bash_runs_itself_goes_through_exec() -> None:
    """``time -v tool`` ran bash's ``time`` keyword in a job script, ``echo`` its builtin."""
    for word in ("time", "echo", "kill", "test", "[", "printf"):
        assert env_command([word, "x"], None) == [*EXEC_ARGV, word, "x"], word
    assert env_command(["timer", "x"], None) == ["timer", "x"]
    # env runs the program of that name itself
    assert env_command(["time", "x"], {"A": "1"}) == ["env", "--", "A=1", "time", "x"]
