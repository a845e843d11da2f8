"""A job script's ``#SBATCH`` lines, written without making its options, are its options' lines.

``job_script`` writes each job's lines directly, the ones every job shares
once per compile (:class:`~shinobi_slurm.scripts.ScriptContext`);
``job_options`` (what submitting checks and warns about) makes the options.
The two must agree, line for line, whatever ``sbatch_opts`` replaces.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from shinobi.errors import UsageError
from shinobi.offload.base import CompileOptions
from shinobi.offload.jobs import Edge, Job, JobGraph
from shinobi.resources import Resources
from shinobi_slurm.sbatch import batch_script, directive
from shinobi_slurm.scripts import (
    JobFiles,
    ScriptContext,
    _body,
    _comments,
    _directives,
    _options,
    _plain,
    job_script,
)


def _job(index: int, name: str, resources: Any = None, **extra: Any) -> Job:
    node = SimpleNamespace(name=name, loop=None, iteration=None, resources=resources)
    return Job(index=index, name=name, node=node, invocations=[], paths=(), **extra)  # type: ignore[arg-type]


def _graph() -> JobGraph:
    jobs = [
        _job(0, "make", commands=[["/bin/touch", "a b"]]),
        _job(1, "fan", Resources(cpus=2.5, memory="100MiB"), commands=[["x", "1"], ["x", "2"]]),
        _job(2, "whole", Resources(cpus="all"), commands=[["y"]], serial="/shared"),
        _job(3, "use", Resources(memory="1GiB"), commands=[["/bin/cat", "a b"]]),
    ]
    jobs[1].scattered = True
    jobs[2].scattered = True
    jobs[3].edges = [Edge(0, "wired", "f"), Edge(1, "wired", "g"), Edge(0, "wired", "h")]
    return JobGraph(recipe="r", cwd="/work", run_id="run1", jobs=jobs)


@pytest.mark.parametrize(
    "sbatch_opts",
    [
        None,
        ["--mem-per-cpu=2G", "-p debug", "--export=ALL,GREETING=hello world"],
        {"exclusive": True, "cpus_per_task": 4, "constraint": 'a"b'},
        ["--mem=1G", "--time 02:00:00"],
    ],
)
@pytest.mark.parametrize("ids", [None, {"make": "11", "fan": "12", "whole": "13"}])
def test_the_written_lines_are_the_options_lines(
    sbatch_opts: Any, ids: dict[str, str] | None, tmp_path: Path
) -> None:
    graph = _graph()
    cwd = tmp_path / 'a dir\'s "name"'
    options = CompileOptions(workdir=cwd, cwd=cwd, run_id="run1")
    context = ScriptContext.of(graph, options, {"sbatch_opts": sbatch_opts})
    for job in graph.jobs:
        files = JobFiles.of(context.run_dir, job)
        made = _options(context, job, files, ids)
        assert _directives(context, job, files, job.tasks, ids) == [directive(o) for o in made]
        whole = batch_script(
            made, _body(context, job, files, job.tasks), comments=_comments(context, job, job.tasks)
        )
        assert job_script(context, job, files, ids) == whole
        assert files.script_name == Path(files.script).name


@pytest.mark.parametrize("folder", ["plain", "a b", "q'uote", 'd"q', "b[1]"])
def test_lines_written_as_they_are_are_the_quoted_ones(folder: str, tmp_path: Path) -> None:
    """A job whose files need no quoting has them written as they are (``_plain``):
    the same lines and script as quoting and escaping each one would give."""
    graph = _graph()
    cwd = tmp_path / folder
    context = ScriptContext.of(graph, CompileOptions(workdir=cwd, cwd=cwd, run_id="run1"), {})
    assert context.plain is (folder == "plain")
    for job in graph.jobs:
        files = JobFiles.of(context.run_dir, job)
        plain = _plain(context, files)
        assert _directives(context, job, files, job.tasks, None, plain) == _directives(
            context, job, files, job.tasks, None
        )
        assert _body(context, job, files, job.tasks, plain) == _body(context, job, files, job.tasks)


def test_a_line_break_is_refused_naming_its_option(tmp_path: Path) -> None:
    graph = _graph()
    graph.jobs[3].edges = [Edge(0, "wired", "f")]
    options = CompileOptions(workdir=tmp_path, cwd=tmp_path, run_id="run1")
    context = ScriptContext.of(graph, options, {})
    files = JobFiles.of(context.run_dir, graph.jobs[3])
    with pytest.raises(UsageError, match=r"'--dependency=afterok:1\\n2'.*holds a line break"):
        job_script(context, graph.jobs[3], files, {"make": "1\n2"})
