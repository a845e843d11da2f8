"""A plain job's script, filled into the text every plain job shares, is the one
the general path writes, byte for byte (``_plain_script`` against ``_any_script``).

Every job below is compared; the ones named in ``PLAIN`` must take the fast
path (otherwise the comparison would prove nothing), the others must not.
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
from shinobi_slurm.scripts import (
    JobFiles,
    ScriptContext,
    _any_script,
    _plain_script,
    job_script,
    script_of,
)


def _job(index: int, name: str, resources: Any = None, loop: Any = None, **extra: Any) -> Job:
    node = SimpleNamespace(name=name, loop=loop, iteration=1, resources=resources)
    return Job(index=index, name=name, node=node, invocations=[], paths=(), **extra)  # type: ignore[arg-type]


#: The jobs ``_plain_script`` writes.
PLAIN = {"make", "use", "it's", "checked", "stopped", "a b", "line\nbreak", "after odd"}


def _graph() -> JobGraph:
    expected = [[("out", "/w/o.txt", "file"), ("d", "/w/d", "dir"), ("g", "/w/*.fits", "glob")]]
    jobs = [
        _job(0, "make", commands=[["/bin/touch", "a b"]]),
        _job(1, "use", commands=[["/bin/cat", "a b"]]),
        _job(2, "it's", commands=[["echo", "x\ny"]]),
        _job(3, "checked", commands=[["t"]], expected=expected),
        _job(4, "stopped", commands=[["docker", "run", "x"]], stops=[["docker", "rm", "-f", "c"]]),
        _job(5, "a b", commands=[["t"]]),  # safe_name's stem: a_b-<hash>
        _job(6, "fan", commands=[["x", "1"], ["x", "2"]], scattered=True),
        _job(7, "sized", Resources(cpus=2), commands=[["t"]]),
        _job(8, "noted", commands=[["t"]], notes=["a note"]),
        _job(9, "promised", commands=[["t"]], promised=["a promise"]),
        _job(10, "accented", commands=[["echo", "caf\u00e9"]]),  # not ASCII
        _job(11, "looped", loop="cal", commands=[["t"]], guard="/w/flag"),
        _job(12, "after odd", commands=[["t"]]),
        _job(13, "line\nbreak", commands=[["t"]]),
        _job(14, "after a break", commands=[["t"]]),
        _job(15, "sl[1]", commands=[["t"]]),  # a stem to quote
    ]
    jobs[1].edges = [Edge(0, "wired", "f"), Edge(0, "wired", "g")]
    jobs[3].edges = [Edge(2, "wired", "f")]
    jobs[12].edges = [Edge(5, "wired", "f"), Edge(10, "wired", "g"), Edge(15, "wired", "h")]
    jobs[14].edges = [Edge(13, "wired", "f")]  # its dependency line would break
    return JobGraph(recipe="r", cwd="/work", run_id="run1", jobs=jobs)


@pytest.mark.parametrize(
    "sbatch_opts", [None, ["-p debug", "--export=ALL,GREETING=hello world", "--time 02:00:00"]]
)
@pytest.mark.parametrize("ids", [None, {j.name: str(100 + j.index) for j in _graph().jobs}])
def test_a_plain_job_s_script_is_the_general_path_s(
    sbatch_opts: Any, ids: dict[str, str] | None, tmp_path: Path
) -> None:
    graph = _graph()
    options = CompileOptions(workdir=tmp_path, cwd=tmp_path, run_id="run1")
    context = ScriptContext.of(graph, options, {"sbatch_opts": sbatch_opts})
    assert context.plain_text is not None
    for job in graph.jobs:
        files = JobFiles.of(context.run_dir, job)
        if job.name == "after a break" and ids is None:
            continue  # refused, below
        fast = _plain_script(context, job, files.stem, ids)
        assert (fast is not None) is (job.name in PLAIN), job.name
        general = _any_script(context, job, files, ids)
        assert fast in (None, general)
        assert job_script(context, job, files, ids) == general
        if ids is None:
            assert script_of(context, job) == (files.script_name, general)


@pytest.mark.parametrize("folder", ["a b", "q'uote", "b[1]"])
def test_a_folder_to_quote_takes_the_general_path(folder: str, tmp_path: Path) -> None:
    cwd = tmp_path / folder
    graph = _graph()
    context = ScriptContext.of(graph, CompileOptions(workdir=cwd, cwd=cwd, run_id="run1"), {})
    assert context.plain_text is None
    job = graph.jobs[0]
    assert _plain_script(context, job, "make", None) is None
    assert script_of(context, job)[1] == _any_script(
        context, job, JobFiles.of(context.run_dir, job), None
    )


def test_a_line_break_in_a_dependency_is_still_refused(tmp_path: Path) -> None:
    graph = _graph()
    context = ScriptContext.of(
        graph, CompileOptions(workdir=tmp_path, cwd=tmp_path, run_id="r"), {}
    )
    with pytest.raises(UsageError, match=r"--dependency=afterok:<line\\nbreak>.*line break"):
        script_of(context, graph.jobs[14])
    files = JobFiles.of(context.run_dir, graph.jobs[1])
    with pytest.raises(UsageError, match=r"'--dependency=afterok:1\\n2'.*holds a line break"):
        job_script(context, graph.jobs[1], files, {"make": "1\n2"})


def test_a_recipe_named_in_unicode_takes_the_general_path(tmp_path: Path) -> None:
    """Every script would hold its name: none is written twice to be found not ASCII."""
    graph = _graph()
    graph.recipe = "r\u00e9"
    options = CompileOptions(workdir=tmp_path, cwd=tmp_path, run_id="run1")
    context = ScriptContext.of(graph, options, {})
    assert context.plain and context.plain_text is None
    job = graph.jobs[0]
    assert "# shinobi: recipe 'r\u00e9', step 'make'" in script_of(context, job)[1]
