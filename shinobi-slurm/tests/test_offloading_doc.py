"""The job script docs/offloading.md shows is the one `ninja compile` prints."""

from __future__ import annotations

import re

from conftest import EXAMPLES, REPO, Ninja

DOC = REPO / "docs" / "offloading.md"


def _excerpt() -> list[str]:
    """The bash block of the "Compiling a recipe" section: the `use` step's script."""
    section = DOC.read_text().split("## Compiling a recipe", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return block.splitlines()


def _pattern(line: str) -> re.Pattern[str]:
    """A doc line with its placeholders (``<run-id>``, ``<make>``, ``...``) as wildcards."""
    parts = re.split(r"(<run-id>|<make>|\.\.\.)", line)
    return re.compile(
        "".join(
            ".+" if part in ("<run-id>", "<make>", "...") else re.escape(part) for part in parts
        )
    )


def test_the_compile_excerpt_matches_what_compile_prints(ninja: Ninja) -> None:
    """The relay line had lost its ``exec /bin/sh -c 'kill ...'`` form in the doc."""
    proc = ninja(
        "compile",
        f"{EXAMPLES / 'offload_demo.py'}:pipe",
        "--target",
        "/scratch/made.ms",
        "--container-runtime",
        "none",
    )
    assert proc.returncode == 0, proc.stderr
    script = proc.stdout.split("# ---- use.sbatch (use) ----", 1)[1].splitlines()
    for line in _excerpt():
        pattern = _pattern(line)
        assert any(pattern.fullmatch(printed) for printed in script), line


def test_the_doc_says_which_job_script_execs_its_tool() -> None:
    """A compiled script runs its command as bash's child; `run -b slurm` execs it."""
    text = " ".join(DOC.read_text().split())
    assert "replaces itself with the tool (`exec`)" in text
    assert "a compiled script does not `exec` its command" in text
